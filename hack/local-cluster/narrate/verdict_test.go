package main

import (
	"strings"
	"testing"
)

var six = []string{"p0", "p1", "p2", "p3", "p4", "p5"}

// facts builds the Facts of a step with the given sick pods; the options fill in what happened.
func facts(sick []string, opts ...func(*Facts)) Facts {
	f := Facts{Sick: sick, Restarts: map[string]int{}, Requests: map[string]int{},
		Holds: map[string]map[string]bool{}, PolicyHeld: map[string]int64{}, Samples: 100}
	for _, p := range six {
		f.Restarts[p] = 0
	}
	for _, o := range opts {
		o(&f)
	}
	return f
}

func restarted(pods ...string) func(*Facts) {
	return func(f *Facts) {
		for _, p := range pods {
			f.Restarts[p]++
			f.Requests[p]++
			f.PolicyRequested++
		}
	}
}

// kubeletRestarted restarts the pods as the kubelet does, without a request (Shadow mode).
func kubeletRestarted(pods ...string) func(*Facts) {
	return func(f *Facts) {
		for _, p := range pods {
			f.Restarts[p]++
		}
	}
}

func held(reason string, pods ...string) func(*Facts) {
	return func(f *Facts) {
		for _, p := range pods {
			if f.Holds[p] == nil {
				f.Holds[p] = map[string]bool{}
			}
			f.Holds[p][reason] = true
			f.PolicyHeld[reason]++
		}
	}
}

func wouldHold(held, restart int) func(*Facts) {
	return func(f *Facts) {
		f.WouldHold, f.WouldRestart, f.WouldHoldBy = held, restart, map[string]int{"FailureStorm": held}
	}
}
func requested(pods ...string) func(*Facts) {
	return func(f *Facts) {
		for _, p := range pods {
			f.Requests[p]++
		}
	}
}

func unavailableAtOnce(n int) func(*Facts) { return func(f *Facts) { f.MaxUnavailable = n } }
func storm(seen, now bool) func(*Facts) {
	return func(f *Facts) { f.StormSeen, f.StormNow = seen, now }
}
func notPassingNow(pods ...string) func(*Facts) { return func(f *Facts) { f.NotPassingNow = pods } }

func stepOf(n int) step {
	for _, s := range append(append([]step(nil), shadowStory...), story...) {
		if s.num == n {
			return s
		}
	}
	panic("no step")
}

func TestJudgeStory(t *testing.T) {
	step8, step9, step10 := stepOf(8).expect, stepOf(9).expect, stepOf(10).expect
	shadow5, shadow6 := stepOf(5).expect, stepOf(6).expect
	dep := six[1:]
	cases := []struct {
		name    string
		expect  Expect
		facts   Facts
		ok      bool
		problem string // a part of the first problem, when not ok
		summary string // a part of the summary
	}{
		{"8: both restarted, one at a time", step8,
			facts(six[:2], restarted("p0", "p1"), held("MaxUnavailable", "p1"), unavailableAtOnce(1)),
			true, "", "2 containers restarted (p0 ×1, p1 ×1); restarts held on 1 pod: MaxUnavailable on 1"},
		{"8: both restarted at the same time", step8,
			facts(six[:2], restarted("p0", "p1"), unavailableAtOnce(2)),
			false, "expected at most 1 pod unavailable at once, saw 2", "at most 2 unavailable at once"},
		{"8: one of them never restarted", step8,
			facts(six[:2], restarted("p0"), held("MaxUnavailable", "p1"), unavailableAtOnce(1)),
			false, "expected exactly 2 containers restarted, saw 1 (p0 ×1)", ""},
		{"8: restarted twice (the restart did not cure it)", step8,
			facts(six[:2], restarted("p0", "p1", "p1"), unavailableAtOnce(1)),
			false, "expected exactly 2 containers restarted, saw 3 (p0 ×1, p1 ×2)", ""},
		{"8: a healthy pod restarted instead", step8,
			facts(six[:2], restarted("p0", "p2"), unavailableAtOnce(1)),
			false, "expected every sick pod restarted, not restarted: p1", ""},
		{"8: a storm reported for 2 of 6", step8,
			facts(six[:2], restarted("p0", "p1"), unavailableAtOnce(1), storm(true, false)),
			false, "expected no storm", "storm detected, then over"},
		{"8: availability never sampled", step8,
			facts(six[:2], restarted("p0", "p1"), func(f *Facts) { f.Samples = 0 }),
			false, "no sample of the pods' availability", ""},

		{"9: held before the first restart (early storm evidence)", step9,
			facts(dep, held("FailureStorm", dep...), storm(true, true)),
			true, "", "0 containers restarted; restarts held on 5 pods: FailureStorm on 5"},
		{"9: one restart, then the rest held as ineffective", step9,
			facts(dep, restarted("p1"), held("RestartIneffective", "p2", "p3", "p4", "p5"), unavailableAtOnce(1),
				storm(true, true)),
			true, "", "RestartIneffective on 4"},
		{"9: every sick pod restarted one at a time, no storm (the native outcome)", step9,
			facts(dep, restarted(dep...), held("MaxUnavailable", "p2", "p3", "p4", "p5"), unavailableAtOnce(1)),
			false, "expected at most 2 containers restarted, saw 5", "no storm"},
		{"9: a pod waited for the budget only, never held by the breaker", step9,
			facts(dep, restarted("p1"), held("FailureStorm", "p2", "p3", "p4"), held("MaxUnavailable", "p5"),
				unavailableAtOnce(1), storm(true, true)),
			false, "not held: p5", ""},
		{"9: storm breaker held everything but the policy never said storm", step9,
			facts(dep, held("FailureStorm", dep...)),
			false, "expected the policy to report a storm", ""},
		{"9: the healthy pod restarted", step9,
			facts(dep, restarted("p0"), held("FailureStorm", dep...), unavailableAtOnce(1), storm(true, true)),
			false, "also restarted: p0", ""},

		{"10: recovered, nothing restarted, hold cleared", step10,
			facts(nil, storm(true, false)), true, "", "0 containers restarted"},
		{"10: a pod restarted after recovery", step10,
			facts(nil, restarted("p3"), storm(true, false)), false, "expected exactly 0 containers restarted, saw 1", ""},
		{"10: the storm never cleared", step10,
			facts(nil, storm(true, true)), false, "StormDetected is still True", ""},
		{"10: a probe still failing", step10,
			facts(nil, notPassingNow("p4")), false, "not passing: p4", ""},
		{"10: RestartsIneffective still True", step10,
			facts(nil, func(f *Facts) { f.IneffectiveSeen, f.IneffectiveNow = true, true }),
			false, "RestartsIneffective is still True", "restarts reported ineffective"},
		{"5 (Shadow): the kubelet restarted every sick pod, the engine would have held most", shadow5,
			facts(dep, kubeletRestarted(dep...), kubeletRestarted(dep...), wouldHold(8, 1)),
			true, "", "the engine would have held 8 of the kubelet's restarts (FailureStorm 8) and made 1"},
		{"5 (Shadow): the operator made a request", shadow5,
			facts(dep, kubeletRestarted(dep...), requested("p1"), wouldHold(3, 0)),
			false, "expected no restart request in Shadow mode, saw 1", ""},
		{"5 (Shadow): the figures count nothing", shadow5,
			facts(dep, kubeletRestarted(dep...)),
			false, "expected the policy's figures to count restarts the engine would have held", ""},
		{"5 (Shadow): the figures count more than the kubelet made", shadow5,
			facts(dep, kubeletRestarted(dep...), wouldHold(5, 1)),
			false, "the figures count 6 of the kubelet's restarts, more than the 5 it made", ""},
		{"5 (Shadow): a sick pod the kubelet never restarted", shadow5,
			facts(dep, kubeletRestarted("p1", "p2", "p3", "p4"), wouldHold(2, 0)),
			false, "expected at least 5 containers restarted, saw 4", ""},
		{"6 (Shadow): recovered, with a last kubelet restart", shadow6,
			facts(nil, kubeletRestarted("p3"), storm(true, false)), true, "", "1 container restarted"},
		{"any step: a pod replaced", step10,
			facts(nil, func(f *Facts) { f.Replaced = []string{"p9 (new)"} }), false, "pods were replaced", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := Judge(c.expect, c.facts)
			if v.OK != c.ok {
				t.Fatalf("OK = %v, want %v; problems: %q", v.OK, c.ok, v.Problems)
			}
			if !c.ok && (len(v.Problems) == 0 || !strings.Contains(v.Problems[0], c.problem)) {
				t.Errorf("problems = %q, want the first to contain %q", v.Problems, c.problem)
			}
			if !strings.Contains(v.Summary, c.summary) {
				t.Errorf("summary = %q, want it to contain %q", v.Summary, c.summary)
			}
		})
	}
}

// The summary reports restart requests and policy counters only when they disagree with the
// restarts seen, so a request that did not lead to a restart (or a restart without one) shows.
func TestSummarizeMismatchedRequests(t *testing.T) {
	f := facts(six[:1], func(f *Facts) { f.Restarts["p0"] = 1 })
	if s := Summarize(f); !strings.Contains(s, "0 restart requests (policy counted 0)") {
		t.Errorf("summary = %q, want the missing request noted", s)
	}
	f = facts(six[:1], restarted("p0"))
	if s := Summarize(f); strings.Contains(s, "request") {
		t.Errorf("summary = %q, want no request note when requests match restarts", s)
	}
	// a reason the policy has counted before the step, but not during it, is not news
	f = facts(six[:1], held("FailureStorm", "p0"), func(f *Facts) { f.PolicyHeld["MaxUnavailable"] = 0 })
	if s := Summarize(f); !strings.Contains(s, "policy counted 1 hold: FailureStorm 1;") {
		t.Errorf("summary = %q, want only the reasons counted during the step", s)
	}
}

// The steps settle only once what they wait for has happened.
func TestSettled(t *testing.T) {
	cases := []struct {
		name  string
		step  int
		facts Facts
		want  bool
	}{
		{"8: one restarted", 8, facts(six[:2], restarted("p0")), false},
		{"8: both restarted, one still unavailable", 5,
			facts(six[:2], restarted("p0", "p1"), func(f *Facts) { f.UnavailableNow = 1 }), false},
		{"8: both restarted and back", 8, facts(six[:2], restarted("p0", "p1")), true},
		{"9: a sick pod not decided yet", 9, facts(six[1:], restarted("p1"), held("FailureStorm", "p2", "p3", "p4")), false},
		{"9: all decided", 9, facts(six[1:], restarted("p1"), held("FailureStorm", "p2", "p3", "p4", "p5")), true},
		{"10: storm still on", 10, facts(nil, storm(true, true)), false},
		{"10: probes still failing", 10, facts(nil, notPassingNow("p2")), false},
		{"10: clear", 10, facts(nil, storm(true, false)), true},
		{"5: every sick pod restarted by the kubelet, no verdict yet", 5, facts(six[1:], kubeletRestarted(six[1:]...)), false},
		{"5: a sick pod not restarted yet", 5, facts(six[1:], kubeletRestarted("p1", "p2"), wouldHold(2, 0)), false},
		{"5: restarted and judged", 5, facts(six[1:], kubeletRestarted(six[1:]...), wouldHold(1, 0)), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := stepOf(c.step).settled(c.facts); got != c.want {
				t.Errorf("settled = %v, want %v", got, c.want)
			}
		})
	}
}
