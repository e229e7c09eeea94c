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

package unprobed

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/facts"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/notice"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/decision/rules"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/podutil"
)

// EventLivenessNotProbed is the event reason on an enrolled pod a container of which no daemon
// probes.
const EventLivenessNotProbed = "LivenessNotProbed"

// unprobedGrace is how long a pod is seen not probed before its first event: the probe mapping
// and the daemon take a few seconds to start probing a new pod.
const unprobedGrace = time.Minute

// unprobedContainers is labelled pod_namespace, not namespace: a scrape labels the series with
// the manager's own namespace, which would push the pods' into exported_namespace.
var unprobedContainers = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "enhanced_liveness_unprobed_containers",
	Help: "Containers of enrolled pods no node daemon probes (they have no liveness), by the pods' namespace.",
}, []string{"pod_namespace"})

// enrolledPods counts the enrolled pods by the mode they were admitted in (their mode label;
// Enforce for a pod 0.1.0 admitted, which has none): how many the operator restarts, and how many
// it only watches beside the kubelet. Set by the same look as unprobedContainers.
var enrolledPods = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "enhanced_liveness_enrolled_pods",
	Help: "Enrolled pods, by the mode they were admitted in: Enforce (the operator restarts them) or Shadow " +
		"(they keep their native livenessProbe; the operator probes beside it and never restarts them).",
}, []string{"mode"})

func init() { metrics.Registry.MustRegister(unprobedContainers, enrolledPods) }

// unprobedWatch counts, every interval, the containers of enrolled pods that no daemon probes
// (facts.Reader.Unprobed) into the gauge, by namespace, and tells each such pod in a Warning
// event once it lasted a grace period (Options.Grace), then every rules.HoldEventInterval.
// It runs on the leader.
type unprobedWatch struct {
	cache    client.Reader
	facts    *facts.Builder
	recorder recorder.EventRecorder
	clock    clock.Clock
	interval time.Duration
	tracker  *notice.Tracker
	// namespaces are those the gauge has a series for.
	namespaces map[string]bool
}

// Options are the unprobed watch's settings.
type Options struct {
	// Interval is how often the pods are looked at.
	Interval time.Duration
	// Grace is how long a pod is seen not probed before its first event (default unprobedGrace).
	Grace time.Duration
	// Clock is the manager's clock.
	Clock clock.Clock
}

// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch;update

// SetupWithManager adds the watch, which reads the cache through the decision's facts builder and
// tells on the pods with the decision's event recorder (the events are the decision's view of
// a pod it cannot decide for).
func SetupWithManager(mgr ctrl.Manager, b *facts.Builder, o Options) error {
	if o.Grace <= 0 {
		o.Grace = unprobedGrace
	}
	return mgr.Add(&unprobedWatch{cache: mgr.GetClient(), facts: b, recorder: mgr.GetEventRecorder("enhanced-liveness-decision"),
		clock: o.Clock, interval: o.Interval, tracker: notice.New(o.Grace, rules.HoldEventInterval), namespaces: map[string]bool{}})
}

// Start looks every interval until ctx ends.
func (u *unprobedWatch) Start(ctx context.Context) error {
	t := time.NewTicker(u.interval)
	defer t.Stop()
	for {
		if err := u.look(ctx); err != nil && ctx.Err() == nil {
			logf.FromContext(ctx).Error(err, "counting unprobed containers")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// look counts once, sets the gauges and emits the events due.
func (u *unprobedWatch) look(ctx context.Context) error {
	pods := &corev1.PodList{}
	if err := u.cache.List(ctx, pods, client.MatchingLabels{appsv1alpha1.LabelEnrolled: appsv1alpha1.TrueValue},
		client.UnsafeDisableDeepCopy); err != nil {
		return err
	}
	rd := u.facts.Reader()
	counts := map[string]int{}
	seen := map[types.UID]string{}
	found := map[types.UID]facts.Unprobed{}
	byUID := map[types.UID]*corev1.Pod{}
	modes := map[string]int{}
	for i := range pods.Items {
		p := &pods.Items[i]
		if !podutil.IsFinished(p) {
			modes[admittedMode(p)]++
		}
		x, err := rd.Unprobed(ctx, p)
		if err != nil {
			return err
		}
		counts[p.Namespace] += x.Containers
		if x.Containers > 0 {
			seen[p.UID], found[p.UID], byUID[p.UID] = x.Reason, x, p
		}
	}
	for ns := range u.namespaces {
		if _, ok := counts[ns]; !ok {
			unprobedContainers.DeleteLabelValues(ns)
			delete(u.namespaces, ns)
		}
	}
	for ns, n := range counts {
		unprobedContainers.WithLabelValues(ns).Set(float64(n))
		u.namespaces[ns] = true
	}
	for _, m := range []string{appsv1alpha1.ModeEnforce, appsv1alpha1.ModeShadow} {
		enrolledPods.WithLabelValues(m).Set(float64(modes[m]))
	}
	for _, d := range u.tracker.Observe(u.clock.Now(), seen) {
		x := found[d.UID]
		u.recorder.Eventf(byUID[d.UID], nil, corev1.EventTypeWarning, EventLivenessNotProbed, x.Reason,
			"%d container(s) have no liveness probe running for %s: %s", x.Containers, d.For.Round(time.Second), x.Message)
	}
	return nil
}

// admittedMode is the mode the pod was admitted in: Enforce unless its mode label says Shadow.
func admittedMode(p *corev1.Pod) string {
	if appsv1alpha1.AdmittedInShadow(p.Labels) {
		return appsv1alpha1.ModeShadow
	}
	return appsv1alpha1.ModeEnforce
}
