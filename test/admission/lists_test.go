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

package admission

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

// perEntryKey is how managedFields name one entry of a map list (k:{"uid":"…"}); atomic lists
// are owned as one field and have none.
const perEntryKey = `k:{`

// ownedFields returns the managedFields of obj as JSON, per field manager.
func ownedFields(obj metav1.Object) map[string]string {
	out := map[string]string{}
	for _, e := range obj.GetManagedFields() {
		if e.FieldsV1 != nil {
			out[e.Manager+"/"+e.Subresource] += e.FieldsV1.GetRawString()
		}
	}
	return out
}

func resultsOf(rep *appsv1alpha1.NodePodProbeReport) {
	rep.Status.ProbedPods = 1
	rep.Status.PodProbeStatuses = []appsv1alpha1.PodProbeStatus{{Name: "web-0", Namespace: "default", UID: "uid-web-0",
		ProbeStates: []appsv1alpha1.ContainerProbeState{{Name: "web-0-app", ContainerID: "containerd://1",
			State: appsv1alpha1.ProbeFailed, LastTransitionTime: metav1.Now()}}}}
}

var _ = Describe("NodePodProbe and report lists", func() {
	It("are owned whole: a spec or results write adds no per-entry field ownership", func() {
		npp := validNPP("lists-npp")
		Expect(k8sClient.Create(ctx, npp, client.FieldOwner("manager"))).To(Succeed())
		// Owned by its NodePodProbe, as the manager creates it.
		rep := &appsv1alpha1.NodePodProbeReport{ObjectMeta: metav1.ObjectMeta{Name: "lists-npp",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: appsv1alpha1.GroupVersion.String(), Kind: "NodePodProbe",
				Name: npp.Name, UID: npp.UID}}}}
		Expect(k8sClient.Create(ctx, rep, client.FieldOwner("manager"))).To(Succeed())
		base := rep.DeepCopy()
		resultsOf(rep)
		Expect(k8sClient.Status().Patch(ctx, rep, client.MergeFrom(base), client.FieldOwner("daemon"))).To(Succeed())
		owned := ownedFields(rep)
		Expect(owned).To(HaveKey("daemon/status"))
		Expect(owned["daemon/status"]).To(ContainSubstring(`"f:podProbeStatuses":{}`))
		Expect(owned["daemon/status"]).NotTo(ContainSubstring(perEntryKey), "the daemon owns result entries one by one")
		for m, f := range ownedFields(npp) {
			Expect(f).NotTo(ContainSubstring(perEntryKey), "manager %s owns spec entries one by one: %s", m, f)
		}
	})
})
