//go:build olm

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

package olm

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/signature"
)

// setSick switches the test app's health off through its admin endpoint (the pod IP is on the
// node's bridge, reachable from this host).
func setSick(p corev1.Pod) error {
	hc := &http.Client{Timeout: 3 * time.Second}
	resp, err := hc.Post(fmt.Sprintf("http://%s:8080/admin/sick", p.Status.PodIP), "text/plain", nil)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST /admin/sick: %s", resp.Status)
	}
	return nil
}

const upgradeReplicas = 3

// containerState is what a restart changes: the container's ID and restart count.
type containerState struct {
	ContainerID  string
	RestartCount int32
}

// enrolledContainers maps each running pod of the app (by UID) to its app container's state.
func enrolledContainers(ns string) map[types.UID]containerState {
	var list corev1.PodList
	Expect(k8s.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{"app": "fleet"})).To(Succeed())
	out := map[types.UID]containerState{}
	for _, p := range list.Items {
		Expect(p.Labels).To(HaveKeyWithValue(appsv1alpha1.LabelEnrolled, appsv1alpha1.TrueValue), "pod %s enrolled", p.Name)
		for _, s := range p.Status.ContainerStatuses {
			if s.Name == "app" {
				out[p.UID] = containerState{ContainerID: s.ContainerID, RestartCount: s.RestartCount}
			}
		}
	}
	return out
}

func deployFleet(ns string) []corev1.Pod {
	labels := map[string]string{"app": "fleet"}
	tmpl := enrolledPod(ns, "")
	tmpl.Labels = labels
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](upgradeReplicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: tmpl.ObjectMeta, Spec: tmpl.Spec},
		},
	}
	d.Spec.Template.Name, d.Spec.Template.Namespace = "", ""
	Expect(k8s.Create(ctx, d)).To(Succeed())
	var pods []corev1.Pod
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(d), d)).To(Succeed())
		g.Expect(d.Status.AvailableReplicas).To(Equal(int32(upgradeReplicas)))
		var list corev1.PodList
		g.Expect(k8s.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels(labels))).To(Succeed())
		pods = list.Items
		g.Expect(pods).To(HaveLen(upgradeReplicas))
	}).WithTimeout(2 * time.Minute).Should(Succeed())
	return pods
}

func upgradeWithRunBundleUpgrade() {
	csvOld, err := getCSV(csvV1)
	Expect(err).NotTo(HaveOccurred())
	imageOld := csvManagerImage(csvOld)

	By(fmt.Sprintf("before: a policy, %d enrolled pods and a finished hand-made CRR", upgradeReplicas))
	ns := newNamespace("upgrade")
	pol := &policyv1alpha1.EnhancedLivenessPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "fleet", Namespace: ns},
		Spec: policyv1alpha1.EnhancedLivenessPolicySpec{
			Mode: policyv1alpha1.ModeEnforce, MaxUnavailable: ptr.To(intstr.FromInt32(1)),
		},
	}
	Expect(k8s.Create(ctx, pol)).To(Succeed())
	pods := deployFleet(ns)
	crr := &appsv1alpha1.ContainerRecreateRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "by-hand", Namespace: ns},
		Spec: appsv1alpha1.ContainerRecreateRequestSpec{
			PodName:                 pods[0].Name,
			Containers:              []appsv1alpha1.ContainerRecreateRequestContainer{{Name: "app"}},
			TTLSecondsAfterFinished: ptr.To[int32](3600),
		},
	}
	Expect(k8s.Create(ctx, crr)).To(Succeed())
	Eventually(func(g Gomega) {
		g.Expect(k8s.Get(ctx, client.ObjectKeyFromObject(crr), crr)).To(Succeed())
		g.Expect(crr.Status.Phase).To(Equal(appsv1alpha1.RecreateSucceeded), crr.Status.Message)
	}).WithTimeout(90 * time.Second).Should(Succeed())
	// Let the restarted container turn ready and every probe report success before counting.
	var before map[types.UID]containerState
	Eventually(func(g Gomega) {
		before = enrolledContainers(ns)
		g.Expect(before).To(HaveLen(upgradeReplicas))
		g.Expect(before[pods[0].UID].RestartCount).To(BeEquivalentTo(1))
	}).WithTimeout(time.Minute).Should(Succeed())
	Consistently(func() map[types.UID]containerState { return enrolledContainers(ns) }).
		WithTimeout(10*time.Second).Should(Equal(before), "healthy and steady before the upgrade")
	GinkgoWriter.Printf("before the upgrade: %v\n", before)
	_, oldDaemons := expectDaemonRolledOut(imageOld)
	sealsBefore := seals(ns)

	upgradeStart := time.Now()
	probing := watchProbing(pods)
	sdk(12*time.Minute, "run", "bundle-upgrade", bundleV2, "--namespace", operatorNS, "--timeout", "10m")
	csv := expectCSVSucceeded(csvV2)
	Expect(csv.Spec.Replaces).To(Equal(csvV1))
	By("the replaced CSV is removed")
	Eventually(func() bool { _, err := getCSV(csvV1); return apierrors.IsNotFound(err) }).
		WithTimeout(3*time.Minute).Should(BeTrue(), "CSV %s gone", csvV1)
	imageNew := csvManagerImage(csv)
	Expect(imageNew).NotTo(Equal(imageOld))

	By("the manager and the daemon DaemonSet rolled to the new image")
	expectManagerRolledOut(imageNew)
	_, newDaemons := expectDaemonRolledOut(imageNew)
	for _, o := range oldDaemons {
		for _, n := range newDaemons {
			Expect(n.UID).NotTo(Equal(o.UID), "daemon pod %s replaced", o.Name)
		}
	}
	expectDaemonReporting(newDaemons[0].CreationTimestamp.Time)
	GinkgoWriter.Printf("upgrade rolled out in %s\n", time.Since(upgradeStart).Round(time.Second))

	By("every enrolled pod stayed in its node's NodePodProbe and was never reported Failed, polled every second across the upgrade")
	polls, problems := probing()
	GinkgoWriter.Printf("%d polls of the NodePodProbes and their reports during the upgrade\n", polls)
	Expect(problems).To(BeEmpty())
	Expect(polls).To(BeNumerically(">=", 10), "polled through the upgrade")

	By("the policy and the CRR are kept")
	keptPol := &policyv1alpha1.EnhancedLivenessPolicy{}
	Expect(k8s.Get(ctx, client.ObjectKeyFromObject(pol), keptPol)).To(Succeed())
	Expect(keptPol.UID).To(Equal(pol.UID))
	keptCRR := &appsv1alpha1.ContainerRecreateRequest{}
	Expect(k8s.Get(ctx, client.ObjectKeyFromObject(crr), keptCRR)).To(Succeed())
	Expect(keptCRR.UID).To(Equal(crr.UID))
	Expect(keptCRR.Status.Phase).To(Equal(appsv1alpha1.RecreateSucceeded))

	By("no enrolled container was restarted across the upgrade, nor after it while the new daemon probes")
	Consistently(func() map[types.UID]containerState { return enrolledContainers(ns) }).
		WithTimeout(20*time.Second).Should(Equal(before), "restart counts and container IDs across the upgrade")
	var crrs appsv1alpha1.ContainerRecreateRequestList
	Expect(k8s.List(ctx, &crrs, client.InNamespace(ns))).To(Succeed())
	Expect(crrs.Items).To(HaveLen(1), "no CRR but the hand-made one")

	By("the new manager trusts the seals the first one wrote: the same signatures and seals, verified by the trust ConfigMap")
	Eventually(func(g Gomega) {
		cm := &corev1.ConfigMap{}
		g.Expect(k8s.Get(ctx, client.ObjectKey{Namespace: operatorNS, Name: signature.TrustConfigMapName}, cm)).To(Succeed())
		keys, errs := signature.DecodeKeySet(cm)
		g.Expect(errs).To(BeEmpty())
		var list corev1.PodList
		g.Expect(k8s.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{"app": "fleet"})).To(Succeed())
		g.Expect(list.Items).To(HaveLen(upgradeReplicas))
		for i := range list.Items {
			p := &list.Items[i]
			_, err := signature.VerifySeal(keys, p)
			g.Expect(err).NotTo(HaveOccurred(), "pod %s sealed", p.Name)
		}
	}).WithTimeout(time.Minute).Should(Succeed())
	Expect(seals(ns)).To(Equal(sealsBefore), "no pod was sealed again")

	By("the new daemon probes every pod the first version enrolled: each, made sick in turn, is reported Failed in its node's report and restarted")
	for _, sick := range pods {
		Expect(setSick(sick)).To(Succeed())
		Eventually(func(g Gomega) {
			rep := &appsv1alpha1.NodePodProbeReport{}
			g.Expect(k8s.Get(ctx, client.ObjectKey{Name: sick.Spec.NodeName}, rep)).To(Succeed())
			failed := false
			if ps := rep.Status.Pod(sick.UID); ps != nil {
				for _, st := range ps.ProbeStates {
					if st.State == appsv1alpha1.ProbeFailed && st.LastTransitionTime.After(newDaemons[0].CreationTimestamp.Time) {
						failed = true
					}
				}
			}
			g.Expect(failed).To(BeTrue(), "a Failed result of pod %s from the new daemon", sick.Name)
		}).WithTimeout(time.Minute).Should(Succeed())
		Eventually(func(g Gomega) {
			now := enrolledContainers(ns)[sick.UID]
			g.Expect(now.RestartCount).To(BeNumerically(">", before[sick.UID].RestartCount), "pod %s restarted through a CRR", sick.Name)
			g.Expect(podReady(ns, sick.Name)).To(BeTrue(), "pod %s ready again", sick.Name)
		}).WithTimeout(2 * time.Minute).Should(Succeed())
	}

	By("the new CSV's webhooks are served with OLM's certificate")
	expectWebhooksServedWithOLMCerts(csvV2)
	expectEnrolledAtAdmission(ns)
}

// seals maps each pod of the fleet to its admission signature and seal.
func seals(ns string) map[string][2]string {
	var list corev1.PodList
	Expect(k8s.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{"app": "fleet"})).To(Succeed())
	out := map[string][2]string{}
	for _, p := range list.Items {
		out[p.Name] = [2]string{p.Annotations[appsv1alpha1.AnnotationProbeContextSignature], p.Annotations[appsv1alpha1.AnnotationProbeContextSeal]}
	}
	return out
}

// podReady reports whether the pod's Ready condition is True.
func podReady(ns, name string) bool {
	p := &corev1.Pod{}
	if err := k8s.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, p); err != nil {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// watchProbing polls every second, until the returned function is called, that each of pods is
// in its node's NodePodProbe and not reported Failed in its node's NodePodProbeReport; that
// function returns how many polls read both objects of every pod, and what was seen otherwise.
// Reads that fail (the API server busy) are not counted.
func watchProbing(pods []corev1.Pod) func() (int, []string) {
	pollCtx, cancel := context.WithCancel(ctx)
	var (
		polls    int
		problems []string
		done     = make(chan struct{})
	)
	poll := func() bool {
		for _, p := range pods {
			npp, rep := &appsv1alpha1.NodePodProbe{}, &appsv1alpha1.NodePodProbeReport{}
			if k8s.Get(pollCtx, client.ObjectKey{Name: p.Spec.NodeName}, npp) != nil ||
				k8s.Get(pollCtx, client.ObjectKey{Name: p.Spec.NodeName}, rep) != nil {
				return false
			}
			at := time.Now().Format(time.RFC3339)
			if !slices.ContainsFunc(npp.Spec.PodProbes, func(pp appsv1alpha1.PodProbe) bool { return pp.UID == p.UID }) {
				problems = append(problems, fmt.Sprintf("%s: pod %s not in NodePodProbe %s (generation %d)", at, p.Name, npp.Name, npp.Generation))
			}
			if ps := rep.Status.Pod(p.UID); ps != nil && ps.FailedProbes() > 0 {
				problems = append(problems, fmt.Sprintf("%s: pod %s reported Failed: %+v", at, p.Name, ps.ProbeStates))
			}
		}
		return true
	}
	go func() {
		defer GinkgoRecover()
		defer close(done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			if poll() {
				polls++
			}
			select {
			case <-pollCtx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return func() (int, []string) {
		cancel()
		<-done
		return polls, problems
	}
}
