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
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/admissionpolicy"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/signature"
)

// What config/default does to config/rbac (namespace, namePrefix), so that these specs exercise
// the shipped files themselves.
const (
	shippedNamespace = "enhanced-liveness-system"
	shippedPrefix    = "enhanced-liveness-operator-"
	daemonUser       = "system:serviceaccount:" + shippedNamespace + ":" + shippedPrefix + "daemon"
	nodeNameExtra    = "authentication.kubernetes.io/node-name"
)

// loadShipped reads manifests under config/ and applies the kustomize namespace and name prefix.
func loadShipped(files ...string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, f := range files {
		fh, err := os.Open(filepath.Join(testutil.RepoRoot(), "config", f))
		Expect(err).NotTo(HaveOccurred())
		dec := utilyaml.NewYAMLOrJSONDecoder(fh, 4096)
		for {
			u := &unstructured.Unstructured{}
			if err := dec.Decode(&u.Object); err != nil {
				Expect(errors.Is(err, io.EOF)).To(BeTrue(), "decoding %s: %v", f, err)
				break
			}
			if len(u.Object) == 0 {
				continue
			}
			out = append(out, kustomizeLike(u))
		}
		Expect(fh.Close()).To(Succeed())
	}
	return out
}

func kustomizeLike(u *unstructured.Unstructured) *unstructured.Unstructured {
	u.SetName(shippedPrefix + u.GetName())
	if u.GetNamespace() != "" {
		u.SetNamespace(shippedNamespace)
	}
	switch u.GetKind() {
	case "RoleBinding", "ClusterRoleBinding":
		name, _, _ := unstructured.NestedString(u.Object, "roleRef", "name")
		Expect(unstructured.SetNestedField(u.Object, shippedPrefix+name, "roleRef", "name")).To(Succeed())
		subjects, _, _ := unstructured.NestedSlice(u.Object, "subjects")
		for i := range subjects {
			s := subjects[i].(map[string]any)
			s["name"] = shippedPrefix + s["name"].(string)
			s["namespace"] = shippedNamespace
		}
		Expect(unstructured.SetNestedSlice(u.Object, subjects, "subjects")).To(Succeed())
	case "ValidatingAdmissionPolicyBinding":
		name, _, _ := unstructured.NestedString(u.Object, "spec", "policyName")
		Expect(unstructured.SetNestedField(u.Object, shippedPrefix+name, "spec", "policyName")).To(Succeed())
	}
	return u
}

// clientAs impersonates the daemon ServiceAccount, with its token's node binding when node != "".
func clientAs(user, node string) client.Client {
	c := rest.CopyConfig(cfg)
	c.Impersonate = rest.ImpersonationConfig{UserName: user,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + shippedNamespace, "system:authenticated"}}
	if node != "" {
		c.Impersonate.Extra = map[string][]string{nodeNameExtra: {node}}
	}
	cl, err := client.New(c, client.Options{Scheme: testutil.Scheme()})
	Expect(err).NotTo(HaveOccurred())
	return cl
}

var patchSeq int

// patchNPPStatus writes a condition into the status of NodePodProbe name.
func patchNPPStatus(c client.Client, name string) error {
	patchSeq++
	p := fmt.Sprintf(`{"status":{"conditions":[{"type":"Mapped","status":"True","reason":"SpecWritten","message":"%d",`+
		`"lastTransitionTime":"2026-12-04T00:00:00Z"}]}}`, patchSeq)
	npp := &appsv1alpha1.NodePodProbe{ObjectMeta: metav1.ObjectMeta{Name: name}}
	return c.Status().Patch(ctx, npp, client.RawPatch(types.MergePatchType, []byte(p)))
}

// patchReportStatus writes a result into NodePodProbeReport name, as the node's daemon does.
func patchReportStatus(c client.Client, name string) error {
	patchSeq++
	p := fmt.Sprintf(`{"status":{"probedGeneration":%d,"podProbeStatuses":[{"name":"p","namespace":"default","uid":"uid-%d",`+
		`"probeStates":[{"name":"liveness","state":"Failed"}]}]}}`, patchSeq, patchSeq)
	rep := &appsv1alpha1.NodePodProbeReport{ObjectMeta: metav1.ObjectMeta{Name: name}}
	return c.Status().Patch(ctx, rep, client.RawPatch(types.MergePatchType, []byte(p)))
}

func patchCRRStatus(c client.Client, ns, name string) error {
	patchSeq++
	crr := &appsv1alpha1.ContainerRecreateRequest{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	return c.Status().Patch(ctx, crr, client.RawPatch(types.MergePatchType,
		fmt.Appendf(nil, `{"status":{"message":"update %d"}}`, patchSeq)))
}

func createLease(c client.Client, name string) error {
	return c.Create(ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: shippedNamespace, Name: name},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: new("x"), LeaseDurationSeconds: new(int32(40))},
	})
}

// deniedByPolicy is an admission denial by the node-scope policy (not an RBAC refusal).
func deniedByPolicy(err error, fragment string) bool {
	return (apierrors.IsForbidden(err) || apierrors.IsInvalid(err)) &&
		strings.Contains(err.Error(), "ValidatingAdmissionPolicy") && strings.Contains(err.Error(), fragment)
}

var _ = Describe("Node daemon access (hand-kept RBAC + ValidatingAdmissionPolicy)", Ordered, func() {
	const crrNS = "elo-daemon-access"

	BeforeAll(func() {
		for _, ns := range []string{shippedNamespace, crrNS} {
			err := k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
			Expect(client.IgnoreAlreadyExists(err)).To(Succeed())
		}
		for _, u := range loadShipped("rbac/daemon_service_account.yaml", "rbac/daemon_role.yaml",
			"rbac/daemon_role_binding.yaml", "rbac/daemon_lease_role.yaml", "rbac/daemon_trust_role.yaml") {
			Expect(k8sClient.Create(ctx, u)).To(Succeed(), "creating %s %s", u.GetKind(), u.GetName())
		}
		// The node-scope policy as the manager builds it, for the daemon ServiceAccount it deploys.
		policy, binding := admissionpolicy.BuildDaemonNodeScope(admissionpolicy.Config{DaemonUsername: daemonUser})
		Expect(k8sClient.Create(ctx, policy)).To(Succeed())
		Expect(k8sClient.Create(ctx, binding)).To(Succeed())
		DeferCleanup(func() {
			Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, binding))).To(Succeed())
			Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, policy))).To(Succeed())
		})
		for _, n := range []string{"node-a", "node-b"} {
			Expect(k8sClient.Create(ctx, &appsv1alpha1.NodePodProbe{ObjectMeta: metav1.ObjectMeta{Name: n}})).To(Succeed())
			Expect(k8sClient.Create(ctx, &appsv1alpha1.NodePodProbeReport{ObjectMeta: metav1.ObjectMeta{Name: n}})).To(Succeed())
			Expect(k8sClient.Create(ctx, &appsv1alpha1.ContainerRecreateRequest{
				ObjectMeta: metav1.ObjectMeta{Namespace: crrNS, Name: "crr-on-" + n,
					Labels: map[string]string{appsv1alpha1.LabelCRRNodeName: n}},
				Spec: appsv1alpha1.ContainerRecreateRequestSpec{PodName: "p",
					Containers: []appsv1alpha1.ContainerRecreateRequestContainer{{Name: "c"}}},
			})).To(Succeed())
		}
		// The policy is enforced once the API server has loaded it.
		daemonA := clientAs(daemonUser, "node-a")
		Eventually(func() bool { return deniedByPolicy(patchReportStatus(daemonA, "node-b"), "node-a") }, packagingSpecTimeout).Should(BeTrue())
	})

	It("refuses the daemon any write of a NodePodProbe, its own node's status included: the manager alone writes it", func() {
		daemonA := clientAs(daemonUser, "node-a")
		for _, node := range []string{"node-a", "node-b"} {
			err := patchNPPStatus(daemonA, node)
			Expect(apierrors.IsForbidden(err)).To(BeTrue(), "got %v", err)
			Expect(deniedByPolicy(err, "")).To(BeFalse(), "refused by RBAC, not by the policy: %v", err)
		}
	})

	It("lets the daemon of node-a write the results of NodePodProbeReport node-a only", func() {
		daemonA := clientAs(daemonUser, "node-a")
		Expect(patchReportStatus(daemonA, "node-a")).To(Succeed())
		err := patchReportStatus(daemonA, "node-b")
		Expect(deniedByPolicy(err, "may write only NodePodProbeReport node-a, not node-b")).To(BeTrue(), "got %v", err)
		Expect(deniedByPolicy(patchReportStatus(clientAs(daemonUser, ""), "node-a"), "token bound to a node")).To(BeTrue())

		rep := &appsv1alpha1.NodePodProbeReport{}
		Expect(daemonA.Get(ctx, types.NamespacedName{Name: "node-a"}, rep)).To(Succeed())
		Expect(daemonA.List(ctx, &appsv1alpha1.NodePodProbeReportList{})).To(Succeed())
		rep.Labels = map[string]string{"x": "y"}
		Expect(apierrors.IsForbidden(daemonA.Update(ctx, rep))).To(BeTrue(), "metadata writes are not granted")
		Expect(apierrors.IsForbidden(daemonA.Delete(ctx, rep))).To(BeTrue())
		Expect(apierrors.IsForbidden(daemonA.Create(ctx, &appsv1alpha1.NodePodProbeReport{ObjectMeta: metav1.ObjectMeta{Name: "node-c"}}))).
			To(BeTrue(), "the manager creates reports")
	})

	It("lets the daemon of node-a write the status of CRRs labelled node-a only", func() {
		daemonA := clientAs(daemonUser, "node-a")
		Expect(patchCRRStatus(daemonA, crrNS, "crr-on-node-a")).To(Succeed())
		err := patchCRRStatus(daemonA, crrNS, "crr-on-node-b")
		Expect(deniedByPolicy(err, "crr.enhancedliveness.io/node-name=node-a")).To(BeTrue(), "got %v", err)
	})

	It("lets the daemon of node-a write only its own heartbeat Lease", func() {
		daemonA := clientAs(daemonUser, "node-a")
		Expect(createLease(daemonA, appsv1alpha1.DaemonLeasePrefix+"node-a")).To(Succeed())
		err := createLease(daemonA, appsv1alpha1.DaemonLeasePrefix+"node-b")
		Expect(deniedByPolicy(err, "may write only Lease enhanced-liveness-daemon-node-a")).To(BeTrue(), "got %v", err)
	})

	It("denies every write of the daemon ServiceAccount without a node-bound token", func() {
		unbound := clientAs(daemonUser, "")
		for _, err := range []error{
			patchReportStatus(unbound, "node-a"),
			patchCRRStatus(unbound, crrNS, "crr-on-node-a"),
			createLease(unbound, appsv1alpha1.DaemonLeasePrefix+"node-a"),
		} {
			Expect(deniedByPolicy(err, "token bound to a node")).To(BeTrue(), "got %v", err)
		}
	})

	It("grants the daemon reads but no writes beyond status (RBAC)", func() {
		daemonA := clientAs(daemonUser, "node-a")
		Expect(daemonA.List(ctx, &corev1.PodList{})).To(Succeed())
		Expect(daemonA.List(ctx, &appsv1alpha1.NodePodProbeList{})).To(Succeed())
		Expect(daemonA.List(ctx, &appsv1alpha1.ContainerRecreateRequestList{}, client.InNamespace(crrNS))).To(Succeed())

		npp := &appsv1alpha1.NodePodProbe{}
		Expect(daemonA.Get(ctx, types.NamespacedName{Name: "node-a"}, npp)).To(Succeed())
		npp.Labels = map[string]string{"x": "y"}
		Expect(apierrors.IsForbidden(daemonA.Update(ctx, npp))).To(BeTrue(), "spec/metadata writes are not granted")
		Expect(apierrors.IsForbidden(daemonA.Delete(ctx, npp))).To(BeTrue())
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: crrNS, Name: "x"},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
		Expect(apierrors.IsForbidden(daemonA.Create(ctx, pod))).To(BeTrue())
		Expect(apierrors.IsForbidden(daemonA.List(ctx, &corev1.SecretList{}, client.InNamespace(shippedNamespace)))).To(BeTrue())
	})

	It("lets the daemon read the trust ConfigMap, as its informer does, and no other ConfigMap", func() {
		trustCM := testutil.TrustConfigMap(shippedNamespace)
		Expect(client.IgnoreAlreadyExists(k8sClient.Create(ctx, trustCM))).To(Succeed())
		other := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: shippedNamespace, Name: "other"}}
		Expect(client.IgnoreAlreadyExists(k8sClient.Create(ctx, other))).To(Succeed())
		daemonA := clientAs(daemonUser, "node-a")
		Expect(daemonA.Get(ctx, client.ObjectKeyFromObject(trustCM), &corev1.ConfigMap{})).To(Succeed())
		var list corev1.ConfigMapList
		Expect(daemonA.List(ctx, &list, client.InNamespace(shippedNamespace),
			client.MatchingFields{"metadata.name": signature.TrustConfigMapName})).To(Succeed())
		Expect(list.Items).To(HaveLen(1))
		Expect(apierrors.IsForbidden(daemonA.Get(ctx, client.ObjectKeyFromObject(other), &corev1.ConfigMap{}))).To(BeTrue())
		Expect(apierrors.IsForbidden(daemonA.List(ctx, &list, client.InNamespace(shippedNamespace)))).To(BeTrue())
		trustCM.Data = map[string]string{}
		Expect(apierrors.IsForbidden(daemonA.Update(ctx, trustCM))).To(BeTrue(), "the daemon cannot trust a key of its own")
	})

	It("does not restrict other users", func() {
		Expect(patchNPPStatus(k8sClient, "node-b")).To(Succeed())
		other := clientAs("system:serviceaccount:"+shippedNamespace+":someone-else", "node-a")
		err := patchNPPStatus(other, "node-b")
		Expect(apierrors.IsForbidden(err)).To(BeTrue())
		Expect(err.Error()).NotTo(ContainSubstring("ValidatingAdmissionPolicy"), "RBAC, not the policy, refuses strangers")
	})
})
