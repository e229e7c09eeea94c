package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

// conditionRestartsIneffective is the policy condition of the restart-effectiveness breaker
// (docs/policy.md, "Restarts that do not help"). Read by name: the demo judges what the cluster shows, whether or not the API in this
// checkout has the condition yet (absent = never True).
const conditionRestartsIneffective = "RestartsIneffective"

// recorder polls the namespace and turns what it sees into the timeline (printed as it happens)
// and into the Facts of the current step. Polling every 250 ms rather than watching keeps it a
// plain loop; availability is therefore sampled at that rate.
type recorder struct {
	c                  client.Client
	ns, policy, deploy string
	selector           client.MatchingLabels

	events   map[types.UID]int32 // RestartHeld and other events: the count already seen
	crrs     map[string]bool     // restart requests already seen
	crrPhase map[string]string
	storm    map[string]string // condition type -> last status, for the timeline

	pods []corev1.Pod // the last sample, sorted by name

	cur   *Facts
	start struct {
		restarts map[string]int
		pods     map[string]types.UID
		held     map[string]int64
		req      int64
		figures  shadowFigures
	}
}

// shadowFigures are the policy's figures of the Deployment's pods admitted in Shadow mode.
type shadowFigures struct {
	avoided, agreed int
	byReason        map[string]int
}

func (r *recorder) shadowFigures(p policyv1alpha1.EnhancedLivenessPolicy) shadowFigures {
	f := shadowFigures{byReason: map[string]int{}}
	if p.Status.Figures == nil {
		return f
	}
	for _, w := range p.Status.Figures.Workloads {
		if w.Workload.Kind != "Deployment" || w.Workload.Name != r.deploy || w.Mode != appsv1alpha1.ModeShadow {
			continue
		}
		f.avoided, f.agreed = int(w.Avoided), int(w.Agreed)
		for _, h := range w.AvoidedByReason {
			f.byReason[string(h.Reason)] = int(h.Count)
		}
	}
	return f
}

func newRecorder(c client.Client, ns, policy, deploy string, selector map[string]string) *recorder {
	return &recorder{c: c, ns: ns, policy: policy, deploy: deploy, selector: selector,
		events: map[types.UID]int32{}, crrs: map[string]bool{}, crrPhase: map[string]string{},
		storm: map[string]string{}}
}

// snapshot is one poll of everything the facts are made of.
type snapshot struct {
	pods   []corev1.Pod
	crrs   []appsv1alpha1.ContainerRecreateRequest
	events []eventsv1.Event
	policy policyv1alpha1.EnhancedLivenessPolicy
	probes []nodeResults
	desire int
}

func (r *recorder) take(ctx context.Context) (*snapshot, error) {
	s := &snapshot{}
	var pods corev1.PodList
	if err := r.c.List(ctx, &pods, client.InNamespace(r.ns), r.selector); err != nil {
		return nil, err
	}
	s.pods = slices.DeleteFunc(pods.Items, func(p corev1.Pod) bool { return p.DeletionTimestamp != nil })
	slices.SortFunc(s.pods, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	var crrs appsv1alpha1.ContainerRecreateRequestList
	if err := r.c.List(ctx, &crrs, client.InNamespace(r.ns)); err != nil {
		return nil, err
	}
	s.crrs = crrs.Items
	var evs eventsv1.EventList
	if err := r.c.List(ctx, &evs, client.InNamespace(r.ns)); err != nil {
		return nil, err
	}
	s.events = evs.Items
	slices.SortFunc(s.events, func(a, b eventsv1.Event) int { return eventTime(a).Compare(eventTime(b)) })
	if err := r.c.Get(ctx, client.ObjectKey{Namespace: r.ns, Name: r.policy}, &s.policy); err != nil {
		return nil, err
	}
	var npps appsv1alpha1.NodePodProbeList
	if err := r.c.List(ctx, &npps); err != nil {
		return nil, err
	}
	var reps appsv1alpha1.NodePodProbeReportList
	if err := r.c.List(ctx, &reps); err != nil {
		return nil, err
	}
	s.probes = pairReports(npps.Items, reps.Items)
	var d appsv1.Deployment
	if err := r.c.Get(ctx, client.ObjectKey{Namespace: r.ns, Name: r.deploy}, &d); err != nil {
		return nil, err
	}
	s.desire = 1
	if d.Spec.Replicas != nil {
		s.desire = int(*d.Spec.Replicas)
	}
	return s, nil
}

// prime records what exists before the story starts, so that none of it counts as news.
func (r *recorder) prime(s *snapshot) {
	for _, e := range s.events {
		r.events[e.UID] = eventCount(e)
	}
	for _, c := range s.crrs {
		r.crrs[c.Name] = true
		r.crrPhase[c.Name] = string(c.Status.Phase)
	}
	for _, t := range []string{policyv1alpha1.ConditionStormDetected, conditionRestartsIneffective} {
		if c := meta.FindStatusCondition(s.policy.Status.Conditions, t); c != nil {
			r.storm[t] = string(c.Status)
		}
	}
	r.pods = s.pods
}

// begin starts the facts of a step: restart counts and policy counters are measured from here.
func (r *recorder) begin(sick []string, s *snapshot) {
	r.cur = &Facts{Sick: sick, Restarts: map[string]int{}, Requests: map[string]int{},
		Holds: map[string]map[string]bool{}, PolicyHeld: map[string]int64{}}
	r.start.restarts, r.start.pods = map[string]int{}, map[string]types.UID{}
	for _, p := range s.pods {
		r.start.restarts[p.Name] = restartCount(p)
		r.start.pods[p.Name] = p.UID
	}
	r.start.held = heldByReason(s.policy)
	r.start.req = s.policy.Status.RestartsRequested
	r.start.figures = r.shadowFigures(s.policy)
	r.observe(s)
}

// end closes the current step and returns its facts.
func (r *recorder) end() Facts {
	f := *r.cur
	r.cur = nil
	return f
}

// observe prints the news of a snapshot and, during a step, adds it to the step's facts.
func (r *recorder) observe(s *snapshot) {
	r.pods = s.pods
	for _, e := range s.events {
		n := eventCount(e)
		if n <= r.events[e.UID] {
			continue
		}
		r.events[e.UID] = n
		if line := describe(e); line != "" {
			say("%-34s %s", e.Regarding.Kind+"/"+e.Regarding.Name, line)
		}
		if r.cur != nil && e.Reason == "RestartHeld" && e.Regarding.Kind == "Pod" {
			pod := e.Regarding.Name
			if r.cur.Holds[pod] == nil {
				r.cur.Holds[pod] = map[string]bool{}
			}
			r.cur.Holds[pod][holdReason(e)] = true
		}
	}
	for _, c := range s.crrs {
		if !r.crrs[c.Name] {
			r.crrs[c.Name] = true
			if r.cur != nil {
				r.cur.Requests[c.Spec.PodName]++
			}
		}
		if phase := string(c.Status.Phase); phase != "" && phase != r.crrPhase[c.Name] {
			r.crrPhase[c.Name] = phase
			msg := ""
			if c.Status.Message != "" {
				msg = ": " + c.Status.Message
			}
			say("%-34s restart request %s%s", "CRR/"+c.Name, phase, msg)
		}
	}
	storm := r.condition(s.policy, policyv1alpha1.ConditionStormDetected,
		"STORM DETECTED, every restart of the workload is held", "storm over, restarts allowed again")
	ineffective := r.condition(s.policy, conditionRestartsIneffective,
		"RESTARTS INEFFECTIVE, further restarts of the workload are held", "restarts held as ineffective no more")
	if r.cur == nil {
		return
	}
	f := r.cur
	f.StormNow, f.IneffectiveNow = storm, ineffective
	f.StormSeen = f.StormSeen || storm
	f.IneffectiveSeen = f.IneffectiveSeen || ineffective
	f.UnavailableNow = unavailable(s)
	f.MaxUnavailable = max(f.MaxUnavailable, f.UnavailableNow)
	f.Samples++
	f.NotPassingNow = notPassing(s.probes, r.ns, s.pods)
	now := map[string]bool{}
	for _, p := range s.pods {
		now[p.Name] = true
		uid, known := r.start.pods[p.Name]
		switch {
		case !known || uid != p.UID:
			f.Replaced = addOnce(f.Replaced, p.Name+" (new)")
		default:
			f.Restarts[p.Name] = restartCount(p) - r.start.restarts[p.Name]
		}
	}
	for p := range r.start.pods {
		if !now[p] {
			f.Replaced = addOnce(f.Replaced, p+" (gone)")
		}
	}
	held := heldByReason(s.policy)
	for reason, n := range held {
		f.PolicyHeld[reason] = n - r.start.held[reason]
	}
	f.PolicyRequested = s.policy.Status.RestartsRequested - r.start.req
	// A new figures window (24 h) starts from zero: count from there.
	figs, was := r.shadowFigures(s.policy), r.start.figures
	if figs.avoided < was.avoided || figs.agreed < was.agreed {
		was = shadowFigures{byReason: map[string]int{}}
	}
	f.WouldHold, f.WouldRestart = figs.avoided-was.avoided, figs.agreed-was.agreed
	f.WouldHoldBy = map[string]int{}
	for reason, n := range figs.byReason {
		if d := n - was.byReason[reason]; d > 0 {
			f.WouldHoldBy[reason] = d
		}
	}
}

// condition tells whether the policy's condition t is True, and prints its changes.
func (r *recorder) condition(p policyv1alpha1.EnhancedLivenessPolicy, t, on, off string) bool {
	c := meta.FindStatusCondition(p.Status.Conditions, t)
	if c == nil {
		return false
	}
	if prev := r.storm[t]; prev != string(c.Status) {
		r.storm[t] = string(c.Status)
		switch {
		case c.Status == metav1.ConditionTrue:
			say("%-34s %s: %s", "policy/"+p.Name, on, c.Message)
		case prev == string(metav1.ConditionTrue):
			say("%-34s %s: %s", "policy/"+p.Name, off, c.Message)
		}
	}
	return c.Status == metav1.ConditionTrue
}

// unavailable is what the decision controller calls unavailable: desired replicas minus pods that
// are Ready and have no unfinished restart request; never below 0.
func unavailable(s *snapshot) int {
	restarting := map[string]bool{}
	for _, c := range s.crrs {
		if !c.Finished() {
			restarting[c.Spec.PodName] = true
		}
	}
	ready := 0
	for _, p := range s.pods {
		if podReady(p) && !restarting[p.Name] {
			ready++
		}
	}
	return max(0, s.desire-ready)
}

func podReady(p corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// nodeResults is what one node says of its pods: its NodePodProbe's spec and its report's results.
type nodeResults struct {
	spec    appsv1alpha1.NodePodProbe
	results appsv1alpha1.ProbeResults
}

// pairReports pairs each NodePodProbe with the results of its node's report (none while there is
// no report).
func pairReports(npps []appsv1alpha1.NodePodProbe, reps []appsv1alpha1.NodePodProbeReport) []nodeResults {
	byNode := map[string]*appsv1alpha1.NodePodProbeReport{}
	for i := range reps {
		byNode[reps[i].Name] = &reps[i]
	}
	out := make([]nodeResults, len(npps))
	for i := range npps {
		out[i].spec = npps[i]
		if rep := byNode[npps[i].Name]; rep != nil {
			out[i].results = rep.Status
		}
	}
	return out
}

// notPassing lists the pods of ns with a liveness state that is not Succeeded (Failed, Unknown, or
// anything a newer daemon reports before the failure threshold). A pod of ns that the reports do
// not list is not passing either, unless its node's report is complete for the spec that lists
// it (probedGeneration): a report leaves passing probes out.
func notPassing(nodes []nodeResults, ns string, pods []corev1.Pod) []string {
	reported := map[types.UID]bool{}
	var out []string
	for _, n := range nodes {
		if n.results.CompleteFor(n.spec.Generation) {
			for _, pp := range n.spec.Spec.PodProbes {
				reported[pp.UID] = true
			}
		}
		for _, ps := range n.results.PodProbeStatuses {
			if ps.Namespace != ns {
				continue
			}
			reported[ps.UID] = true
			for _, st := range ps.ProbeStates {
				if st.State != appsv1alpha1.ProbeSucceeded {
					out = addOnce(out, ps.Name)
				}
			}
		}
	}
	for _, p := range pods {
		if !reported[p.UID] {
			out = addOnce(out, p.Name+" (not reported)")
		}
	}
	slices.Sort(out)
	return out
}

func restartCount(p corev1.Pod) int {
	n := 0
	for _, c := range p.Status.ContainerStatuses {
		n += int(c.RestartCount)
	}
	return n
}

func heldByReason(p policyv1alpha1.EnhancedLivenessPolicy) map[string]int64 {
	m := map[string]int64{}
	for _, h := range p.Status.HeldByReason {
		m[string(h.Reason)] = h.Count
	}
	return m
}

// holdReason is the hold reason of a RestartHeld event: its action, or else the note's prefix
// ("FailureStorm: 5 of 6 pods ...").
func holdReason(e eventsv1.Event) string {
	if e.Action != "" {
		return e.Action
	}
	if r, _, ok := strings.Cut(e.Note, ":"); ok {
		return r
	}
	return "unknown"
}

// eventCount is how many times the event happened as far as the API shows. The events API writes
// the first repetition (count 2) at once and later ones only at its periodic series refresh, so
// a third hold of the same pod, reason and action may not be seen; the policy's heldByReason
// counters, also recorded, count every one.
func eventCount(e eventsv1.Event) int32 {
	switch {
	case e.Series != nil:
		return e.Series.Count
	case e.DeprecatedCount > 0:
		return e.DeprecatedCount
	}
	return 1
}

func addOnce(xs []string, x string) []string {
	if slices.Contains(xs, x) {
		return xs
	}
	return append(xs, x)
}

func say(format string, args ...any) {
	fmt.Printf("  %s  %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}
