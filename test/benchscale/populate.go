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

package main

import (
	"context"
	"fmt"
	"maps"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/signature"
)

// parallel runs fn(0..n-1) on workers goroutines and returns the first error.
func parallel(ctx context.Context, n, workers int, fn func(ctx context.Context, i int) error) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	for i := range n {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error { return fn(gctx, i) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return ctx.Err()
}

// populated is what populate made and how long it took.
type populated struct {
	pods         []*podRec // by pod number
	took         time.Duration
	podWritesPer float64 // pod writes (create + status) per second
}

// populate creates, before any manager runs, what a cluster with the layout holds: namespaces
// with one EnhancedLivenessPolicy each, Nodes (metadata only), the daemons' Leases, a
// Deployment and its ReplicaSet per workload, and the pods, bound to their nodes, created and
// then given a running status as the kubelet would, by many concurrent clients.
func populate(ctx context.Context, cl *cluster, l layout, o options) (*populated, error) {
	start := time.Now()
	c := cl.core
	for n := range l.namespaces {
		ns := l.namespace(n)
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: objectMeta("", ns)}); err != nil {
			return nil, err
		}
		// Every pod is governed by its namespace's policy: the budget is what the failure rounds
		// check; the rate limit is set out of the way (it is not what is measured).
		pol := &policyv1alpha1.EnhancedLivenessPolicy{ObjectMeta: objectMeta(ns, "bench"),
			Spec: policyv1alpha1.EnhancedLivenessPolicySpec{
				MaxUnavailable: ptr.To(intstr.FromInt32(int32(o.maxUnavailable))),
				MaxFailing:     ptr.To(intstr.FromString("50%")),
				RateLimit:      policyv1alpha1.RateLimit{RestartsPerMinute: 100000, Burst: 100000}}}
		if err := cl.c.Create(ctx, pol); err != nil {
			return nil, err
		}
	}
	// The manager maps only probe contexts its pod webhook admitted and it then sealed to the pod.
	// The benchmark creates pods directly, so it writes the signing key the manager then loads,
	// signs each pod as the webhook would at admission and seals it in the write that reports it
	// running (what the manager does once per pod creation, not part of the cold start measured).
	signingKey, err := signature.GenerateKeyPair()
	if err != nil {
		return nil, err
	}
	if err := c.Create(ctx, &corev1.Secret{ObjectMeta: objectMeta(opNamespace, signature.DefaultSecretName),
		Data: map[string][]byte{signature.SecretSigningKeyData: signingKey.Private.Seed()}}); err != nil {
		return nil, fmt.Errorf("signing key: %w", err)
	}
	err = parallel(ctx, l.nodes, o.writers, func(ctx context.Context, n int) error {
		name := l.nodeName(n)
		if err := create(ctx, c, &corev1.Node{ObjectMeta: objectMeta("", name)}); err != nil {
			return err
		}
		return create(ctx, c, &coordinationv1.Lease{ObjectMeta: objectMeta(opNamespace, appsv1alpha1.DaemonLeasePrefix+name),
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(name), LeaseDurationSeconds: ptr.To[int32](24 * 3600),
				RenewTime: &metav1.MicroTime{Time: time.Now()}}})
	})
	if err != nil {
		return nil, fmt.Errorf("nodes: %w", err)
	}
	owners := make([]metav1.OwnerReference, l.workloads)
	templates := make([]corev1.PodTemplateSpec, l.workloads)
	err = parallel(ctx, l.workloads, o.writers, func(ctx context.Context, w int) error {
		ns, tmpl := l.namespace(w), l.podTemplate(w)
		templates[w] = tmpl
		sel := &metav1.LabelSelector{MatchLabels: map[string]string{labelName: l.workload(w)}}
		d := &appsv1.Deployment{ObjectMeta: objectMeta(ns, l.workload(w)),
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To(int32(l.perWorkload)), Selector: sel, Template: tmpl}}
		if err := create(ctx, c, d); err != nil {
			return err
		}
		rsSel := sel.DeepCopy()
		rsSel.MatchLabels["pod-template-hash"] = tmpl.Labels["pod-template-hash"]
		rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: l.replicaSet(w),
			Labels: maps.Clone(tmpl.Labels), OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment",
				Name: d.Name, UID: d.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
			Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To(int32(l.perWorkload)), Selector: rsSel, Template: tmpl}}
		if err := create(ctx, c, rs); err != nil {
			return err
		}
		owners[w] = metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID,
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("workloads: %w", err)
	}

	podStart := time.Now()
	pods := make([]*podRec, l.pods)
	var done atomic.Int64
	stopProgress := progress("pods created and running", &done, l.pods)
	err = parallel(ctx, l.pods, o.writers, func(ctx context.Context, g int) error {
		w, i := g/l.perWorkload, g%l.perWorkload
		tmpl := &templates[w]
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: l.namespace(w), Name: l.podName(w, i),
			// Decoding the response writes into these maps: each pod needs its own.
			Labels: maps.Clone(tmpl.Labels), Annotations: maps.Clone(tmpl.Annotations),
			OwnerReferences: []metav1.OwnerReference{owners[w]}},
			Spec: *tmpl.Spec.DeepCopy()}
		ctxKey := appsv1alpha1.AnnotationProbeContext
		pod.Annotations[appsv1alpha1.AnnotationProbeContextSignature] = signature.SignAdmission(signingKey, signature.Admission{
			Namespace: pod.Namespace, Name: pod.Name, AnnotationKey: ctxKey, Value: pod.Annotations[ctxKey], Issued: time.Now()})
		node := l.node(w, i)
		pod.Spec.NodeName = l.nodeName(node)
		if g%1000 == 0 {
			if err := checkMemory(); err != nil {
				return err
			}
		}
		if err := create(ctx, c, pod); err != nil {
			return err
		}
		rec := &podRec{ns: pod.Namespace, name: pod.Name, uid: pod.UID, w: w, node: node, ip: podIP(g), gen: 1}
		status := runningStatus(rec, nodeIP(node))
		err := retry(ctx, func(attempt int) error {
			if attempt > 0 { // the timed-out update may have happened
				if err := c.Get(ctx, client.ObjectKeyFromObject(pod), pod); err != nil {
					return err
				}
			}
			seal, err := signature.Seal(signingKey, pod)
			if err != nil {
				return err
			}
			pod.Annotations[appsv1alpha1.AnnotationProbeContextSeal] = seal
			pod.Status = status
			return c.Status().Update(ctx, pod)
		})
		if err != nil {
			return err
		}
		pods[g] = rec
		done.Add(1)
		return nil
	})
	stopProgress()
	if err != nil {
		return nil, fmt.Errorf("pods: %w", err)
	}
	podTook := time.Since(podStart)
	return &populated{pods: pods, took: time.Since(start),
		podWritesPer: float64(2*l.pods) / podTook.Seconds()}, nil
}

// progress prints done/total every 15 s until the returned function is called.
func progress(what string, done *atomic.Int64, total int) func() {
	stop := make(chan struct{})
	finished := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(finished)
		t := time.NewTicker(15 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				n := done.Load()
				logf("  %d/%d %s, %.0f/s (load %s)", n, total, what, float64(n)/time.Since(start).Seconds(), loadAvg())
			}
		}
	}()
	return func() { close(stop); <-finished }
}
