/*
Copyright 2026 The enhanced-liveness-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package explain

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/stamp"
)

// maxResults is how many results the text shows per container (JSON and YAML carry them all).
const maxResults = 3

// Write prints the explanation for a terminal: one screen per pod, plain words, times in UTC
// with their age at now.
func Write(w io.Writer, x Explanation, now time.Time) error {
	p := &printer{w: w, now: now}
	where := ""
	if x.Node != "" {
		where = ", on node " + x.Node
	}
	p.line("Pod %s in namespace %s%s", x.Pod, x.Namespace, where)
	p.field("Mode", "%s: %s", x.Mode, x.ModeNote)
	if x.Workload != nil {
		p.field("Workload", "%s %s", x.Workload.Kind, x.Workload.Name)
	}
	if len(x.Policies) > 0 {
		ps := make([]string, 0, len(x.Policies))
		for _, pol := range x.Policies {
			ps = append(ps, fmt.Sprintf("%s (%s)", pol.Name, pol.Mode))
		}
		p.field("Policies", "%s", strings.Join(ps, ", "))
	} else if x.Mode != ModeNative {
		p.field("Policies", "none selects it: the manager's default policy governs it")
	}
	for _, c := range x.Containers {
		p.container(c)
	}
	for _, f := range x.Figures {
		p.figures(f)
	}
	for _, e := range x.Evictions {
		p.line("")
		p.field("Eviction", "pod %s (container %s) from node %s at %s, policy %s: new pods avoid that node until %s",
			e.Pod, e.Container, e.Node, p.at(e.Time), e.Policy, p.at(e.Expires))
	}
	if len(x.Notes) > 0 {
		p.line("")
		p.line("Not shown:")
		for _, n := range x.Notes {
			p.line("  - %s", n)
		}
	}
	return p.err
}

type printer struct {
	w   io.Writer
	now time.Time
	err error
}

func (p *printer) line(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format+"\n", args...)
	}
}

// field prints a label and its value, continuation lines indented under the value.
func (p *printer) field(label, format string, args ...any) {
	p.indented("", label, format, args...)
}

func (p *printer) indented(indent, label, format string, args ...any) {
	pad := indent + strings.Repeat(" ", 12)
	text := strings.ReplaceAll(fmt.Sprintf(format, args...), "\n", "\n"+pad)
	if label != "" {
		label += ":"
	}
	p.line("%s%-12s%s", indent, label, text)
}

func (p *printer) at(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return fmt.Sprintf("%s (%s)", stamp.Seconds(t), age(p.now.Sub(t)))
}

func age(d time.Duration) string {
	if d < 0 {
		return "in " + (-d).Round(time.Second).String()
	}
	return d.Round(time.Second).String() + " ago"
}

func (p *printer) container(c Container) {
	const in = "  "
	p.line("")
	p.line("Container %s", c.Name)
	switch {
	case c.Probe != "":
		p.indented(in, "Probe", "%s (run by the node daemon)", c.Probe)
	case c.ProbeProblem != "":
		p.indented(in, "Probe", "not run: %s", c.ProbeProblem)
	}
	if c.NativeProbe {
		p.indented(in, "Native", "the container keeps its livenessProbe: the kubelet runs it and restarts the container")
	}
	p.indented(in, "State", "%s, %d restarts", c.State, c.Restarts)
	for i, r := range c.Results {
		if i == maxResults {
			p.indented(in, "", "(%d older: -o yaml)", len(c.Results)-maxResults)
			break
		}
		label := ""
		if i == 0 {
			label = "Results"
		}
		count := ""
		if r.Count > 1 {
			count = fmt.Sprintf(", %d times", r.Count)
		}
		p.indented(in, label, "%s %s (%s%s) %s", p.at(r.Time), r.Outcome, r.Source, count, r.Message)
	}
	p.decision(c.Decision)
	if h := c.Hold; h != nil {
		p.indented(in, "Hold", "RestartHold %s: %s since %s, %d canaries tried", h.Name, h.Reason, p.at(h.Onset), h.Canaries)
	}
	p.indented(in, "Kubelet", "%s", c.Kubelet)
	for i, r := range c.Requests {
		label := ""
		if i == 0 {
			label = "Requests"
		}
		msg := ""
		if r.Message != "" {
			msg = ": " + r.Message
		}
		p.indented(in, label, "%s %s, created %s%s", r.Name, r.Phase, p.at(r.Created), msg)
	}
}

func (p *printer) decision(d Decision) {
	const in = "  "
	switch d.Verdict {
	case VerdictNone:
		p.indented(in, "Decision", "none: no failure to decide on")
	case VerdictHeld:
		since := ""
		if d.Since != nil {
			since = " since " + p.at(*d.Since)
		}
		p.indented(in, "Decision", "restart held: %s (a %s hold)%s", d.Reason, strings.ToLower(d.Kind), since)
		if d.Rule != "" {
			p.indented(in, "Rule", "%s", d.Rule)
		}
		p.indented(in, "Ends when", "%s", d.EndsWhen)
	default:
		p.indented(in, "Decision", "%s: %s", d.Verdict, d.Rule)
	}
}

func (p *printer) figures(f Figures) {
	p.line("")
	by := ""
	if len(f.AvoidedByReason) > 0 {
		parts := make([]string, 0, len(f.AvoidedByReason))
		for _, r := range slices.Sorted(maps.Keys(f.AvoidedByReason)) {
			parts = append(parts, fmt.Sprintf("%s %d", r, f.AvoidedByReason[r]))
		}
		by = " (" + strings.Join(parts, ", ") + ")"
	}
	verb := "the kubelet would have made"
	if f.Mode == ModeShadow {
		verb = "the kubelet made"
	}
	p.field("Figures", "policy %s, pods admitted in %s mode, since %s: of the restarts %s, the engine held %d%s "+
		"and made %d, %d s later at the median, %d s at most", f.Policy, f.Mode, p.at(f.Since), verb, f.Avoided, by,
		f.Agreed, f.AddedP50Seconds, f.AddedMaxSeconds)
}
