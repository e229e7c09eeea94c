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

package trust

import (
	"context"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/manager/managercache"
	eltestutil "github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/signature"
)

const keysNS = "trust-keys"

// switchKey is a signing key that a spec rotates, as a manager replica holds it: secret is the
// key of the Secret, kp the one the replica read last (Sync reads it again).
type switchKey struct {
	mu         sync.Mutex
	kp, secret signature.KeyPair
	syncs      int
}

func (s *switchKey) Sync(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.kp = s.secret
	s.syncs++
	return nil
}

// rotateUnread puts a new key in the Secret that this replica has not read yet.
func (s *switchKey) rotateUnread(kp signature.KeyPair) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.secret = kp
}

func (s *switchKey) Current() (signature.KeyPair, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.kp, true
}

func (s *switchKey) set(kp signature.KeyPair) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.kp, s.secret = kp, kp
}

func trustedSet(g Gomega) signature.KeySet {
	cm := &corev1.ConfigMap{}
	g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: keysNS, Name: signature.TrustConfigMapName}, cm)).To(Succeed())
	set, _ := signature.DecodeKeySet(cm)
	return set
}

func newKey() signature.KeyPair {
	GinkgoHelper()
	kp, err := signature.GenerateKeyPair()
	Expect(err).NotTo(HaveOccurred())
	return kp
}

// sealedWith creates an enrolled pod sealed with kp, as the seal controller leaves it.
func sealedWith(kp signature.KeyPair, name string) *corev1.Pod {
	GinkgoHelper()
	pod := eltestutil.NewPod(keysNS, name).Enrolled().Containers("web").
		Annotations(map[string]string{appsv1alpha1.AnnotationProbeContext: webContext}).Build()
	Expect(k8sClient.Create(ctx, pod)).To(Succeed())
	s, err := signature.Seal(kp, pod)
	Expect(err).NotTo(HaveOccurred())
	pod.Annotations[appsv1alpha1.AnnotationProbeContextSeal] = s
	Expect(k8sClient.Update(ctx, pod)).To(Succeed())
	return pod
}

var _ = Describe("the trust key set controller", Ordered, func() {
	var (
		stop func()
		keys = &switchKey{}
		k1   signature.KeyPair
	)
	BeforeAll(func() {
		Expect(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: keysNS}})).To(Succeed())
		k1 = newKey()
		keys.set(k1)
		var err error
		stop, err = eltestutil.StartManager(ctx, cfg, ctrl.Options{
			Cache: managercache.Options(managercache.Config{OperatorNamespace: keysNS}),
		}, func(mgr ctrl.Manager) error {
			if err := managercache.AddIndexes(ctx, mgr); err != nil {
				return err
			}
			return (&KeySetReconciler{Client: mgr.GetClient(), Keys: keys, Namespace: keysNS,
				RetireGrace: 2 * time.Second, Interval: 300 * time.Millisecond}).SetupWithManager(mgr)
		})
		Expect(err).NotTo(HaveOccurred())
	})
	AfterAll(func() { stop() })

	It("lists the signing key", func() {
		Eventually(func(g Gomega) {
			set := trustedSet(g)
			g.Expect(set).To(HaveKey(k1.ID))
			g.Expect(set[k1.ID].Retired.IsZero()).To(BeTrue())
		}, "10s").Should(Succeed())
	})

	It("keeps a rotated-out key while a pod is sealed with it, and drops it once none is", func() {
		pod := sealedWith(k1, "sealed-with-k1")
		k2 := newKey()
		keys.set(k2)
		Eventually(func(g Gomega) {
			set := trustedSet(g)
			g.Expect(set).To(HaveKey(k2.ID))
			g.Expect(set[k2.ID].Retired.IsZero()).To(BeTrue())
			g.Expect(set[k1.ID].Retired.IsZero()).To(BeFalse(), "k1 retired")
		}, "10s").Should(Succeed())
		Consistently(func(g Gomega) {
			set := trustedSet(g)
			g.Expect(set).To(HaveKey(k1.ID), "a pod is still sealed with k1")
			_, err := signature.VerifySeal(set, pod)
			g.Expect(err).NotTo(HaveOccurred(), "the pod keeps verifying across the rotation")
		}, "4s").Should(Succeed())

		Expect(k8sClient.Delete(ctx, pod, client.GracePeriodSeconds(0))).To(Succeed())
		Eventually(func(g Gomega) { g.Expect(trustedSet(g)).NotTo(HaveKey(k1.ID)) }, "10s").Should(Succeed())
		Expect(trustedSet(Default)).To(HaveKey(k2.ID))
	})

	It("re-creates a deleted ConfigMap with every key it held", func() {
		k2, _ := keys.Current()
		pod := sealedWith(k2, "sealed-with-k2")
		k3 := newKey()
		keys.set(k3)
		Eventually(func(g Gomega) { g.Expect(trustedSet(g)).To(HaveKey(k3.ID)) }, "10s").Should(Succeed())
		Expect(k8sClient.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: keysNS,
			Name: signature.TrustConfigMapName}})).To(Succeed())
		Eventually(func(g Gomega) {
			set := trustedSet(g)
			g.Expect(set).To(HaveKey(k2.ID), "the key a pod is sealed with survives a deleted ConfigMap")
			g.Expect(set).To(HaveKey(k3.ID))
		}, "10s").Should(Succeed())
		_, err := signature.VerifySeal(trustedSet(Default), pod)
		Expect(err).NotTo(HaveOccurred())
	})

	It("keeps a key removed by hand removed, and a damaged entry out of the trusted set", func() {
		cur, _ := keys.Current()
		var removed string
		Eventually(func(g Gomega) {
			cm := &corev1.ConfigMap{}
			g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: keysNS, Name: signature.TrustConfigMapName}, cm)).To(Succeed())
			for id := range cm.Data {
				if id != cur.ID {
					removed = id
					delete(cm.Data, id)
				}
			}
			cm.Data["garbage"] = "{"
			g.Expect(k8sClient.Update(ctx, cm)).To(Succeed())
		}, "10s").Should(Succeed())
		Expect(removed).NotTo(BeEmpty())
		Consistently(func(g Gomega) {
			set := trustedSet(g)
			g.Expect(set).NotTo(HaveKey(removed), "a key an administrator removed (compromised) is not brought back")
			g.Expect(set).To(HaveKey(cur.ID))
			g.Expect(set).NotTo(HaveKey("garbage"))
		}, "2s").Should(Succeed())
		GinkgoWriter.Printf("removed %s, kept %s\n", removed, cur.ID)
	})

	It("puts back the key it signs with when the Secret still holds it", func() {
		cur, _ := keys.Current()
		removeByHand(cur.ID)
		Eventually(func(g Gomega) { g.Expect(trustedSet(g)).To(HaveKey(cur.ID)) }, "10s").Should(Succeed(),
			"the key every new pod is sealed with must stay trusted")
	})

	It("never puts back a revoked key that this replica has not stopped signing with yet", func() {
		revoked, _ := keys.Current()
		// Another replica rotated (the Secret deleted): it published the new key and wrote the
		// Secret; this one re-reads the Secret only every minute.
		next := newKey()
		keys.rotateUnread(next)
		Expect(signature.Publish(ctx, k8sClient, keysNS, signature.TrustConfigMapName, next, time.Now())).To(Succeed())
		removeByHand(revoked.ID)
		Consistently(func(g Gomega) {
			g.Expect(trustedSet(g)).NotTo(HaveKey(revoked.ID), "the administrator revoked it")
			g.Expect(trustedSet(g)).To(HaveKey(next.ID))
		}, "2s").Should(Succeed())
		now, _ := keys.Current()
		Expect(now.ID).To(Equal(next.ID), "the replica re-read the Secret")
	})
})

// removeByHand takes a key out of the trust ConfigMap as an administrator would.
func removeByHand(id string) {
	GinkgoHelper()
	Eventually(func(g Gomega) {
		cm := &corev1.ConfigMap{}
		g.Expect(k8sClient.Get(ctx, types.NamespacedName{Namespace: keysNS, Name: signature.TrustConfigMapName}, cm)).To(Succeed())
		g.Expect(cm.Data).To(HaveKey(id))
		delete(cm.Data, id)
		g.Expect(k8sClient.Update(ctx, cm)).To(Succeed())
	}, "10s").Should(Succeed())
}
