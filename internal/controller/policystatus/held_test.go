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

package policystatus

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/memory"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
)

var heldPolicy = rules.PolicyKey{Namespace: "shop", Name: "tight"}

// budgetHold is the failure of web-0 under maxUnavailable 0, with notReady other pods not Ready.
func budgetHold(notReady int) (*rules.Facts, rules.Failure) {
	pol := rules.Policy{Key: heldPolicy, MaxUnavailable: ptr.To(intstr.FromInt32(0)), MaxFailing: intstr.FromString("100%"),
		Rate: rules.Rate{PerMinute: 6, Burst: 3}, Breaker: rules.DefaultRestartBreaker}
	pods := make([]rules.PodState, 4)
	for i := range pods {
		pods[i] = rules.PodState{UID: types.UID(fmt.Sprintf("uid-%d", i)), Ready: i == 0 || i > notReady, Healthy: true}
	}
	f := &rules.Facts{
		Pod: types.NamespacedName{Namespace: "shop", Name: "web-0"}, UID: pods[0].UID, Found: true,
		Daemon:   rules.Daemon{Reporting: true},
		Policies: rules.Governing{pol},
		Workload: rules.WorkloadState{Ref: rules.WorkloadRef{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}, Desired: 4, Pods: pods},
		Self:     pods[0],
		Node:     rules.NodeState{Name: "n1", Pods: 4, FailingPods: 1, FailingWorkloads: 1},
		Settings: rules.Settings{RestartsEnabled: true, NodeStorm: rules.NodeStormRule{MaxFailing: intstr.FromString("50%"), MinWorkloads: 3}},
	}
	return f, rules.Failure{Probe: "web-0-app", Container: "app", ContainerID: "containerd://0", Running: "containerd://0", Request: "web-0-app"}
}

// A held restart's status entry carries the message of the decision that began the hold. Decided
// again with other numbers, the entry is the same, so the status needs no write for it.
func TestHeldPodMessageReachesTheStatusOnce(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	clk := clocktesting.NewFakePassiveClock(t0)
	mem := memory.New(clk, rules.Rate{}, nil)
	onset := mem.Decide(budgetHold(0))
	if onset.Outcome != rules.Hold || onset.Reason != policyv1alpha1.HoldMaxUnavailable {
		t.Fatalf("onset: %s %s", onset.Outcome, onset.Reason)
	}
	var st policyv1alpha1.EnhancedLivenessPolicyStatus
	listHeld(&st, mem.Snapshot(heldPolicy).HeldPods)
	want := "0 of 4 pods of Deployment/web are unavailable, maxUnavailable is 0 (policy shop/tight)"
	if len(st.HeldPods) != 1 || st.HeldPods[0].Message != want || onset.Message != want {
		t.Fatalf("heldPods %+v, decision %q; want the message %q", st.HeldPods, onset.Message, want)
	}

	clk.SetTime(t0.Add(time.Minute))
	again := mem.Decide(budgetHold(2))
	if again.Reason != onset.Reason || !strings.HasPrefix(again.Message, "2 of 4 pods") {
		t.Fatalf("decided again: %s %q; want the same hold with other numbers", again.Reason, again.Message)
	}
	next := *st.DeepCopy()
	listHeld(&next, mem.Snapshot(heldPolicy).HeldPods)
	if !equality.Semantic.DeepEqual(st, next) {
		t.Fatalf("the status changed with the numbers: %+v, then %+v", st.HeldPods, next.HeldPods)
	}
}

// A message longer than the API takes is cut to it, as valid UTF-8 ending with "...": a longer one
// would have the API server refuse the whole status.
func TestHeldPodMessageIsCutToTheAPIBound(t *testing.T) {
	long := strings.Repeat("é", policyv1alpha1.MaxHeldPodMessageLength)
	var st policyv1alpha1.EnhancedLivenessPolicyStatus
	listHeld(&st, []memory.HeldPod{
		{Pod: types.NamespacedName{Namespace: "shop", Name: "a"}, Container: "app", Reason: policyv1alpha1.HoldShadow, Message: long},
		{Pod: types.NamespacedName{Namespace: "shop", Name: "b"}, Container: "app", Reason: policyv1alpha1.HoldShadow, Message: "short"},
	})
	cut := st.HeldPods[0].Message
	if len(cut) > policyv1alpha1.MaxHeldPodMessageLength || !utf8.ValidString(cut) || !strings.HasSuffix(cut, "...") ||
		!strings.HasPrefix(long, strings.TrimSuffix(cut, "...")) {
		t.Errorf("cut message of %d bytes: %q", len(cut), cut)
	}
	if st.HeldPods[1].Message != "short" {
		t.Errorf("short message %q", st.HeldPods[1].Message)
	}
}
