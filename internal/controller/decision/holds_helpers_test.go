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

package decision

import (
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
)

// restartHold reads the RestartHold of a workload's container (an empty one while there is none).
func restartHold(ns, kind, workload, container string) func() *policyv1alpha1.RestartHold {
	group := "apps"
	if kind == "Pod" {
		group = ""
	}
	key := rules.HoldKey{Workload: rules.WorkloadKey{Namespace: ns, Group: group, Kind: kind, Name: workload}, Container: container}
	return func() *policyv1alpha1.RestartHold {
		h := &policyv1alpha1.RestartHold{}
		if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: HoldRecordName(key)}, h); err != nil {
			Expect(client.IgnoreNotFound(err)).To(Succeed())
		}
		return h
	}
}

// restartHolds lists the RestartHolds of ns.
func restartHolds(ns string) func() []policyv1alpha1.RestartHold {
	return func() []policyv1alpha1.RestartHold {
		list := &policyv1alpha1.RestartHoldList{}
		Expect(k8sClient.List(ctx, list, client.InNamespace(ns))).To(Succeed())
		return list.Items
	}
}

// makePending plays a pod the scheduler cannot place any more (or whose image never pulls):
// Pending, no container running.
func makePending(pod *corev1.Pod) {
	Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(pod), pod)).To(Succeed())
	pod.Status = corev1.PodStatus{Phase: corev1.PodPending}
	Expect(k8sClient.Status().Update(ctx, pod)).To(Succeed())
}
