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

package apps

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

// perEntryKey is how managedFields name one entry of a map list (k:{"uid":"…"}); atomic lists
// are owned as one field and have none.
const perEntryKey = `k:{`

// ownedFields returns the managedFields of obj as JSON, per field manager.
func ownedFields(obj metav1.Object) map[string]string {
	out := map[string]string{}
	for _, e := range obj.GetManagedFields() {
		if e.FieldsV1 != nil {
			out[e.Manager+"/"+e.Subresource] += string(e.FieldsV1.Raw)
		}
	}
	return out
}

func statusOf(npp *appsv1alpha1.NodePodProbe) {
	npp.Status.ProbedPods = 1
	npp.Status.PodProbeStatuses = []appsv1alpha1.PodProbeStatus{{Name: "web-0", Namespace: "default", UID: "uid-web-0",
		ProbeStates: []appsv1alpha1.ContainerProbeState{{Name: "web-0-app", ContainerID: "containerd://1",
			State: appsv1alpha1.ProbeSucceeded, LastTransitionTime: metav1.Now()}}}}
}

var _ = Describe("NodePodProbe lists", func() {
	It("are owned whole: a status write adds no per-entry field ownership", func() {
		npp := validNPP("lists-npp")
		Expect(k8sClient.Create(ctx, npp, client.FieldOwner("manager"))).To(Succeed())
		base := npp.DeepCopy()
		statusOf(npp)
		Expect(k8sClient.Status().Patch(ctx, npp, client.MergeFrom(base), client.FieldOwner("daemon"))).To(Succeed())
		owned := ownedFields(npp)
		Expect(owned).To(HaveKey("daemon/status"))
		Expect(owned["daemon/status"]).To(ContainSubstring(`"f:podProbeStatuses":{}`))
		for m, f := range owned {
			Expect(f).NotTo(ContainSubstring(perEntryKey), "manager %s owns list entries one by one: %s", m, f)
		}
	})

	// The CRD as released before the lists became atomic: an upgrade replaces it under existing
	// objects whose managedFields name list entries.
	It("upgrade from map lists: existing objects keep being written and their ownership shrinks", func() {
		const group = "upgrade.enhancedliveness.test"
		load := func(path string) *apiextensionsv1.CustomResourceDefinition {
			raw, err := os.ReadFile(path)
			Expect(err).NotTo(HaveOccurred())
			crd := &apiextensionsv1.CustomResourceDefinition{}
			Expect(yaml.UnmarshalStrict(raw, crd)).To(Succeed())
			// Another group, so the suite's own NodePodProbe CRD is not touched.
			crd.Name, crd.Spec.Group = "nodepodprobes."+group, group
			return crd
		}
		scheme := runtime.NewScheme()
		Expect(apiextensionsv1.AddToScheme(scheme)).To(Succeed())
		crds, err := client.New(cfg, client.Options{Scheme: scheme})
		Expect(err).NotTo(HaveOccurred())
		old := load(filepath.Join("testdata", "nodepodprobes-map-lists.yaml"))
		current := load(filepath.Join(testutil.RepoRoot(), "config", "crd", "bases", "apps.enhancedliveness.io_nodepodprobes.yaml"))
		Expect(crds.Create(ctx, old)).To(Succeed())
		DeferCleanup(func() { Expect(crds.Delete(ctx, old)).To(Succeed()) })
		established := func(g Gomega) {
			got := &apiextensionsv1.CustomResourceDefinition{}
			g.Expect(crds.Get(ctx, client.ObjectKeyFromObject(old), got)).To(Succeed())
			ok := false
			for _, c := range got.Status.Conditions {
				ok = ok || (c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue)
			}
			g.Expect(ok).To(BeTrue())
		}
		Eventually(established).Should(Succeed())

		// Objects of the test group, written as the manager (spec) and the daemon (status) do.
		typed := validNPP("upgraded")
		obj := toUnstructured(typed, group)
		Eventually(func() error { return k8sClient.Create(ctx, obj, client.FieldOwner("manager")) }).Should(Succeed())
		writeStatus := func() error {
			statusOf(typed)
			patch, err := json.Marshal(map[string]any{"status": typed.Status})
			Expect(err).NotTo(HaveOccurred())
			return k8sClient.Status().Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch), client.FieldOwner("daemon"))
		}
		writeSpec := func(ip string) error {
			patch := []byte(`{"spec":{"podProbes":[` + mustJSON(typed.Spec.PodProbes[0], ip) + `]}}`)
			return k8sClient.Patch(ctx, obj, client.RawPatch(types.MergePatchType, patch), client.FieldOwner("manager"))
		}
		Expect(writeStatus()).To(Succeed())
		Expect(strings.Join(slices.Collect(maps.Values(ownedFields(obj))), "")).To(ContainSubstring(perEntryKey), "the old schema tracks entries")

		Expect(crds.Get(ctx, client.ObjectKeyFromObject(old), old)).To(Succeed())
		old.Spec.Versions = current.Spec.Versions
		Expect(crds.Update(ctx, old)).To(Succeed())
		Eventually(func(g Gomega) {
			g.Expect(writeSpec("10.0.0.8")).To(Succeed())
			g.Expect(writeStatus()).To(Succeed())
			for m, f := range ownedFields(obj) {
				g.Expect(f).NotTo(ContainSubstring(perEntryKey), "manager %s", m)
			}
		}).Should(Succeed())
		Expect(obj.Object["spec"].(map[string]any)["podProbes"].([]any)[0].(map[string]any)["ip"]).To(Equal("10.0.0.8"))
	})
})

func toUnstructured(npp *appsv1alpha1.NodePodProbe, group string) *unstructured.Unstructured {
	GinkgoHelper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(npp)
	Expect(err).NotTo(HaveOccurred())
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion(group + "/" + appsv1alpha1.GroupVersion.Version)
	u.SetKind("NodePodProbe")
	return u
}

func mustJSON(p appsv1alpha1.PodProbe, ip string) string {
	GinkgoHelper()
	p.IP = ip
	b, err := json.Marshal(p)
	Expect(err).NotTo(HaveOccurred())
	return string(b)
}
