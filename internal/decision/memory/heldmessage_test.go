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

package memory

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/intstr"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
)

// A held restart keeps the message of the decision that began its hold (its RestartHeld
// event's): the same hold decided again with other numbers keeps it, a new reason replaces it.
func TestHeldPodKeepsTheMessageOfItsOnset(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(t0)
	m := New(clk, rules.Rate{}, nil)
	budget := func(notReady int) (*rules.Facts, rules.Failure) {
		f, x := facts(1)
		f.Policies[0].MaxUnavailable = ptr.To(intstr.FromInt32(0))
		for i := range notReady {
			f.Workload.Pods[2+i].Ready = false
		}
		return f, x
	}
	for _, step := range []struct {
		name     string
		after    time.Duration
		decide   func() (*rules.Facts, rules.Failure)
		reason   policyv1alpha1.HoldReason
		numbers  string // in the decision's message
		kept     string // in the held pod's message: the onset's
		newOnset bool
	}{
		{"onset", 0, func() (*rules.Facts, rules.Failure) { return budget(0) }, policyv1alpha1.HoldMaxUnavailable,
			"0 of 10 pods of Deployment/web are unavailable, maxUnavailable is 0 (policy ns/p)", "0 of 10 pods", true},
		{"other numbers, same hold", time.Minute, func() (*rules.Facts, rules.Failure) { return budget(2) }, policyv1alpha1.HoldMaxUnavailable,
			"2 of 10 pods of Deployment/web are unavailable", "0 of 10 pods", false},
		{"a new reason", 2 * time.Minute, func() (*rules.Facts, rules.Failure) {
			f, x := budget(0)
			f.Policies[0].MaxFailing = intstr.FromInt32(0)
			f.Workload.Pods[1].Failing = true
			return f, x
		}, policyv1alpha1.HoldFailureStorm, "1 of 10 pods of Deployment/web are failing, more than maxFailing 0 (policy ns/p)", "1 of 10 pods", true},
	} {
		clk.SetTime(t0.Add(step.after))
		d := m.Decide(step.decide())
		if d.Outcome != rules.Hold || d.Reason != step.reason || !strings.Contains(d.Message, step.numbers) {
			t.Fatalf("%s: %s %s %q; want a %s hold saying %q", step.name, d.Outcome, d.Reason, d.Message, step.reason, step.numbers)
		}
		held := m.Snapshot(policyKey).HeldPods
		if len(held) != 1 || held[0].Reason != step.reason || !strings.HasPrefix(held[0].Message, step.kept) {
			t.Fatalf("%s: held %+v; want the message to begin %q", step.name, held, step.kept)
		}
		if step.newOnset && (held[0].Message != d.Message || !held[0].Since.Equal(clk.Now())) {
			t.Fatalf("%s: held %+v; want the decision's whole message %q since now", step.name, held[0], d.Message)
		}
	}
}
