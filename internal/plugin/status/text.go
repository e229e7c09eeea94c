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

package status

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Write prints the status for a terminal: one table per section, times as ages at now.
func Write(w io.Writer, s Status, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	p := &printer{w: tw, now: now}
	p.line("Enhanced liveness in %s", s.Scope)
	p.policies(s.Policies)
	if len(s.Held) > 0 {
		p.section("Restarts held now (oldest first; each policy lists at most 50)")
		p.line("NAMESPACE\tPOD\tCONTAINER\tREASON\tHELD FOR\tMESSAGE")
		for _, h := range s.Held {
			msg := h.Message
			if msg == "" {
				msg = "-" // an entry an earlier manager wrote
			}
			p.line("%s\t%s\t%s\t%s\t%s\t%s", h.Namespace, h.Pod, h.Container, h.Reason, p.age(h.Since), msg)
		}
	}
	if len(s.Holds) > 0 {
		p.section("RestartHolds (doubt holds of a workload's container)")
		p.line("NAMESPACE\tWORKLOAD\tCONTAINER\tREASON\tSINCE\tCANARIES\tNEXT CANARY")
		for _, h := range s.Holds {
			next := "-"
			switch {
			case h.Canary != "":
				next = "judging " + h.Canary
			case h.NextCanary != nil:
				next = "in " + h.NextCanary.Sub(now).Round(time.Second).String()
			}
			p.line("%s\t%s\t%s\t%s\t%s\t%d\t%s", h.Namespace, h.Workload, h.Container, h.Reason, p.age(h.Onset), h.Canaries, next)
		}
	}
	if len(s.Unprobed) > 0 {
		p.section("Enrolled pods not probed (their last LivenessNotProbed event)")
		p.line("NAMESPACE\tPOD\tWHY\tSEEN\tMESSAGE")
		for _, u := range s.Unprobed {
			p.line("%s\t%s\t%s\t%s\t%s", u.Namespace, u.Pod, u.Why, p.age(u.Seen), u.Message)
		}
	}
	if len(s.Nodes) > 0 {
		p.section("Nodes")
		p.line("NODE\tSTORM CONDITION\tDAEMON LEASE")
		for _, n := range s.Nodes {
			storm, lease := "-", "-"
			if n.Storm != "" {
				storm = "True (" + n.Storm + "): " + n.StormMessage
			}
			if n.DaemonLease != "" {
				lease = "expired"
				if n.LeaseRenewed != nil {
					lease += ", renewed " + p.age(*n.LeaseRenewed) + " ago"
				}
			}
			p.line("%s\t%s\t%s", n.Name, storm, lease)
		}
	}
	if len(s.Notes) > 0 {
		p.section("Not shown")
		for _, n := range s.Notes {
			p.line("- %s", n)
		}
	}
	if p.err != nil {
		return p.err
	}
	return tw.Flush()
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

func (p *printer) section(title string) {
	p.line("")
	p.line("%s", title)
}

func (p *printer) age(t time.Time) string {
	return p.now.Sub(t).Round(time.Second).String()
}

func (p *printer) policies(ps []Policy) {
	p.section("Policies")
	if len(ps) == 0 {
		p.line("none: the manager's default policy governs the enrolled pods")
		return
	}
	p.line("NAMESPACE\tPOLICY\tMODE\tENROLLED\tSHADOW\tFAILING\tUNPROBED\tHELD NOW\tOLDEST HOLD\tAVOIDED\tAGREED\tADDED MAX")
	for _, x := range ps {
		oldest := "-"
		if x.OldestHold != nil {
			oldest = p.age(*x.OldestHold)
		}
		held := fmt.Sprint(x.HeldNow)
		if len(x.HeldByReason) > 0 {
			var parts []string
			for _, r := range slices.Sorted(maps.Keys(x.HeldByReason)) {
				parts = append(parts, fmt.Sprintf("%s %d", r, x.HeldByReason[r]))
			}
			held += " (" + strings.Join(parts, ", ") + ")"
		}
		p.line("%s\t%s\t%s\t%d\t%d\t%d\t%d\t%s\t%s\t%d\t%d\t%ds", x.Namespace, x.Name, x.Mode, x.Enrolled, x.Shadow, x.Failing,
			x.Unprobed, held, oldest, x.Avoided, x.Agreed, x.AddedMax)
	}
}
