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

package benchdecision

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/sync/errgroup"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
	decisioncontroller "github.com/enhanced-liveness/enhanced-liveness-operator/internal/controller/decision"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/manager/managercache"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

const (
	namespace      = "bench"
	opNamespace    = "bench-system"
	workloads      = 50
	replicas       = 40 // 50 x 40 = 2,000 pods
	nodes          = 20
	failingPerLoad = 4 // 200 failures
)

var (
	c       client.Client
	pods    []*corev1.Pod
	podNode = map[types.UID]string{}
	gen     = map[types.UID]int{}

	mu        sync.Mutex
	decisions map[types.NamespacedName]time.Time // first Restart decision of the round, by pod
)

func TestMain(m *testing.M) {
	flag.Parse()
	// Without -bench there is nothing to run: do not start an apiserver.
	if f := flag.Lookup("test.bench"); f == nil || f.Value.String() == "" {
		os.Exit(m.Run())
	}
	logf.SetLogger(logr.Discard())
	env, err := testutil.NewEnvironment()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	cfg, err := env.Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := run(m, cfg)
	_ = env.Stop()
	os.Exit(code)
}

func run(m *testing.M, cfg *rest.Config) int {
	ctx := context.Background()
	fast := rest.CopyConfig(cfg)
	fast.QPS, fast.Burst = 2000, 4000
	var err error
	if c, err = client.New(fast, client.Options{Scheme: testutil.Scheme()}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := setup(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "setup:", err)
		return 1
	}
	enrolled := labels.SelectorFromSet(labels.Set{appsv1alpha1.LabelEnrolled: appsv1alpha1.TrueValue})
	byObject := map[client.Object]cache.ByObject{&corev1.Pod{}: {Label: enrolled}}
	opts := ctrl.Options{Cache: cache.Options{ByObject: byObject}}
	stop, err := testutil.StartManager(ctx, fast, opts, func(mgr ctrl.Manager) error {
		if err := managercache.AddIndexes(ctx, mgr); err != nil {
			return err
		}
		return decisioncontroller.SetupWithManager(mgr, decisioncontroller.Config{
			RestartsEnabled: true,
			Defaults: rules.Defaults{MaxUnavailable: intstr.FromString("25%"), MaxFailing: intstr.FromString("50%"),
				RestartsPerMinute: 6, Burst: 3},
			NodeStorm:         rules.NodeStormRule{MaxFailing: intstr.FromString("50%"), MinWorkloads: 3},
			OperatorNamespace: opNamespace,
			OnDecision: func(d decisioncontroller.DecisionRecord) {
				if d.Outcome != rules.Restart {
					return
				}
				mu.Lock()
				defer mu.Unlock()
				if decisions != nil {
					if _, ok := decisions[d.Pod]; !ok {
						decisions[d.Pod] = d.At
					}
				}
			},
		})
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "manager:", err)
		return 1
	}
	defer stop()
	return m.Run()
}

// setup creates the namespace, a policy that lets every failure of a round through (the rate
// limit is not what is measured), the Deployments, ReplicaSets and pods, their running status,
// the daemons' Leases, the NodePodProbe specs and their reports.
func setup(ctx context.Context) error {
	for _, ns := range []string{namespace, opNamespace} {
		if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return err
		}
	}
	pol := &policyv1alpha1.EnhancedLivenessPolicy{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: "bench"},
		Spec: policyv1alpha1.EnhancedLivenessPolicySpec{
			RateLimit: policyv1alpha1.RateLimit{RestartsPerMinute: 100000, Burst: 100000}}}
	if err := c.Create(ctx, pol); err != nil {
		return err
	}
	var g errgroup.Group
	g.SetLimit(32)
	var pmu sync.Mutex
	for w := range workloads {
		name := fmt.Sprintf("app-%02d", w)
		podLabels := map[string]string{"app": name}
		sel := &metav1.LabelSelector{MatchLabels: podLabels}
		tmpl := corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: podLabels},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.example/app:1"}}}}
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
			Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](replicas), Selector: sel, Template: tmpl}}
		if err := c.Create(ctx, d); err != nil {
			return err
		}
		rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name + "-7c9d",
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name, UID: d.UID,
				Controller: ptr.To(true)}}},
			Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](replicas), Selector: sel, Template: tmpl}}
		if err := c.Create(ctx, rs); err != nil {
			return err
		}
		for i := range replicas {
			node := fmt.Sprintf("node-%02d", (w*replicas+i)%nodes)
			g.Go(func() error {
				l := map[string]string{"app": name, appsv1alpha1.LabelEnrolled: appsv1alpha1.TrueValue}
				owner := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID,
					Controller: ptr.To(true)}
				podName := fmt.Sprintf("%s-%02d", name, i)
				// The probe context as the pod webhook writes it: the decision reads the probes there.
				a := map[string]string{appsv1alpha1.AnnotationProbeContext: `[{"name":"app","livenessProbe":{"httpGet":{"path":"/healthz","port":8080}}}]`}
				p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: podName, Labels: l, Annotations: a,
					OwnerReferences: []metav1.OwnerReference{owner}},
					Spec: corev1.PodSpec{NodeName: node, Containers: tmpl.Spec.Containers}}
				if err := c.Create(ctx, p); err != nil {
					return err
				}
				if err := setRunning(ctx, p, 1); err != nil {
					return err
				}
				pmu.Lock()
				defer pmu.Unlock()
				pods = append(pods, p)
				podNode[p.UID] = node
				gen[p.UID] = 1
				return nil
			})
		}
	}
	if err := g.Wait(); err != nil {
		return err
	}
	slices.SortFunc(pods, func(a, b *corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	for n := range nodes {
		node := fmt.Sprintf("node-%02d", n)
		leaseMeta := metav1.ObjectMeta{Namespace: opNamespace, Name: appsv1alpha1.DaemonLeasePrefix + node}
		l := &coordinationv1.Lease{ObjectMeta: leaseMeta,
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(node), LeaseDurationSeconds: ptr.To[int32](3600),
				RenewTime: &metav1.MicroTime{Time: time.Now()}}}
		if err := c.Create(ctx, l); err != nil {
			return err
		}
		npp := &appsv1alpha1.NodePodProbe{ObjectMeta: metav1.ObjectMeta{Name: node}}
		for _, p := range pods {
			if podNode[p.UID] != node {
				continue
			}
			npp.Spec.PodProbes = append(npp.Spec.PodProbes, appsv1alpha1.PodProbe{Name: p.Name, Namespace: p.Namespace, UID: p.UID})
		}
		if err := c.Create(ctx, npp); err != nil {
			return err
		}
		// The report as the manager creates it, then as the daemon writes it: every probe passes.
		rep := &appsv1alpha1.NodePodProbeReport{ObjectMeta: metav1.ObjectMeta{Name: node}}
		if err := c.Create(ctx, rep); err != nil {
			return err
		}
		rep.Status = appsv1alpha1.ProbeResults{ObservedGeneration: npp.Generation, ProbedGeneration: npp.Generation}
		if err := c.Status().Update(ctx, rep); err != nil {
			return err
		}
	}
	return nil
}

func cid(p *corev1.Pod, g int) string { return fmt.Sprintf("containerd://%s-%d", p.UID, g) }

// setRunning plays the kubelet: the container runs as instance g, the pod is Ready.
func setRunning(ctx context.Context, p *corev1.Pod, g int) error {
	now := metav1.Now()
	p.Status = corev1.PodStatus{Phase: corev1.PodRunning,
		Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now}},
		ContainerStatuses: []corev1.ContainerStatus{{Name: "app", Image: "registry.example/app:1", ImageID: "sha256:0",
			Ready: true, RestartCount: int32(g - 1), ContainerID: cid(p, g),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}}}}
	return c.Status().Update(ctx, p)
}
