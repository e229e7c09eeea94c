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

package gate

import (
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/podutil"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/probecontext"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/signature"
)

// ReasonRejected is the Warning event on a pod one of whose NodePodProbe probes the daemon does
// not run.
const ReasonRejected = "LivenessProbeRejected"

// DefaultUnknownKeyWait is how long a seal naming a key the daemon does not hold stays pending
// before it is refused.
const DefaultUnknownKeyWait = time.Minute

var (
	// Refused is the number of probes of the node's NodePodProbe the daemon does not run, by cause
	// (pending ones included: pod-not-found, awaiting-seal, unknown-key).
	Refused = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "enhanced_liveness_daemon_probes_refused",
		Help: "Probes of the node's NodePodProbe that the daemon does not run because they do not match a sealed " +
			"probe context of their pod, by cause.",
	}, []string{"cause"})
	// Refusals counts the probes the daemon refused (not the pending ones), by cause.
	Refusals = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "enhanced_liveness_daemon_probe_refusals_total",
		Help: "Probes the daemon refused to run (each refusal once, with a Warning event on the pod), by cause.",
	}, []string{"cause"})
)

func init() { ctrlmetrics.Registry.MustRegister(Refused, Refusals) }

// Gate passes the node's NodePodProbe entries through Check and reports what it holds back: a
// Warning event on the pod when a probe is refused (once per probe and cause), and the metrics.
// A seal naming an unknown key stays pending for UnknownKeyWait, then is refused.
type Gate struct {
	Recorder       events.EventRecorder
	Clock          clock.PassiveClock
	UnknownKeyWait time.Duration

	mu sync.Mutex
	// refused holds the cause last reported per pod UID and probe ("" for the whole entry).
	refused map[refusalKey]string
	// unknownSince is when a pod's seal was first found naming an unknown key.
	unknownSince map[unknownKey]time.Time
	// verified remembers the seals that verified, with which key and the probe context they
	// cover, so that a pod event does not verify and decode every pod of the node again (a seal
	// verifies for its exact probe context).
	verified map[verifiedSeal]sealedContext
}

type sealedContext struct {
	keyID string
	pctx  probecontext.Context
}

type verifiedSeal struct {
	uid         types.UID
	seal, value string
}

type refusalKey struct {
	uid   types.UID
	probe string
}

type unknownKey struct {
	uid  types.UID
	seal string
}

// Filter returns the entries with the probes the daemon may run (entries with none are left
// out), and after how long to filter again for a pending verdict that time alone can change
// (zero: none).
func (g *Gate) Filter(entries []appsv1alpha1.PodProbe, pods map[types.UID]*corev1.Pod, keys signature.KeySet) ([]appsv1alpha1.PodProbe, time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	p := g.newPass(keys)
	var out []appsv1alpha1.PodProbe
	for i := range entries {
		pp := &entries[i]
		pod := pods[pp.UID]
		accepted, refused := check(pp, pod, p.verify, p.decodeOnce)
		for _, r := range refused {
			p.refuse(pp, pod, r)
		}
		if len(accepted) > 0 {
			e := *pp
			e.Probes = accepted
			out = append(out, e)
		}
	}
	// What this pass saw replaces what the gate remembered: a pod or seal gone is forgotten.
	g.refused, g.unknownSince, g.verified = p.seen, p.unknown, p.verified
	Refused.Reset()
	for cause, n := range p.counts {
		Refused.WithLabelValues(cause).Set(n)
	}
	return out, p.retry
}

// pass is what one Filter call learns about the refusals, unknown keys and verified seals.
type pass struct {
	g     *Gate
	keys  signature.KeySet
	now   time.Time
	wait  time.Duration
	retry time.Duration

	seen     map[refusalKey]string
	unknown  map[unknownKey]time.Time
	counts   map[string]float64
	verified map[verifiedSeal]sealedContext
}

func (g *Gate) newPass(keys signature.KeySet) *pass {
	if g.Clock == nil {
		g.Clock = clock.RealClock{}
	}
	wait := g.UnknownKeyWait
	if wait <= 0 {
		wait = DefaultUnknownKeyWait
	}
	return &pass{
		g: g, keys: keys, now: g.Clock.Now(), wait: wait,
		seen:     map[refusalKey]string{},
		unknown:  map[unknownKey]time.Time{},
		counts:   map[string]float64{},
		verified: map[verifiedSeal]sealedContext{},
	}
}

func sealKey(pod *corev1.Pod) verifiedSeal {
	return verifiedSeal{pod.UID, pod.Annotations[appsv1alpha1.AnnotationProbeContextSeal],
		pod.Annotations[probecontext.AnnotationKey(pod.Annotations)]}
}

// verify checks the pod's seal, trusting an earlier verification while its key is still trusted.
func (p *pass) verify(pod *corev1.Pod) error {
	k := sealKey(pod)
	if v, ok := p.g.verified[k]; ok {
		if _, trusted := p.keys[v.keyID]; trusted {
			p.verified[k] = v
			return nil
		}
	}
	id, err := signature.VerifySeal(p.keys, pod)
	if err == nil {
		p.verified[k] = sealedContext{keyID: id}
	}
	return err
}

// decodeOnce decodes a verified pod's probe context once per seal.
func (p *pass) decodeOnce(pod *corev1.Pod) (probecontext.Context, error) {
	k := sealKey(pod)
	if v := p.verified[k]; v.pctx.Key != "" {
		return v.pctx, nil
	}
	pctx, err := decode(pod)
	if v, ok := p.verified[k]; ok && err == nil {
		v.pctx = pctx
		p.verified[k] = v
	}
	return pctx, err
}

// refuse counts a refusal and tells it once; an unknown key stays pending (untold, retried) for
// the gate's wait from its first sighting.
func (p *pass) refuse(pp *appsv1alpha1.PodProbe, pod *corev1.Pod, r Refusal) {
	if r.Cause == CauseUnknownKey {
		k := unknownKey{pp.UID, pod.Annotations[appsv1alpha1.AnnotationProbeContextSeal]}
		since, ok := p.g.unknownSince[k]
		if !ok {
			since = p.now
		}
		p.unknown[k] = since
		if left := p.wait - p.now.Sub(since); left > 0 {
			p.retry = minPositive(p.retry, left)
		} else {
			r.Pending = false
		}
	}
	n := len(pp.Probes)
	if r.Probe != "" {
		n = 1
	}
	p.counts[r.Cause] += float64(n)
	if r.Pending {
		return
	}
	key := refusalKey{pp.UID, r.Probe}
	p.seen[key] = r.Cause
	if p.g.refused[key] != r.Cause {
		Refusals.WithLabelValues(r.Cause).Add(float64(n))
		p.g.report(pod, r)
	}
}

// report sends the Warning event of a refusal on the pod (none when the daemon knows no such pod).
func (g *Gate) report(pod *corev1.Pod, r Refusal) {
	if g.Recorder == nil || pod == nil {
		return
	}
	ref := &corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID}
	what := "the liveness probes the node's NodePodProbe lists for this pod are"
	if r.Probe != "" {
		what = fmt.Sprintf("liveness probe %s the node's NodePodProbe lists for container %q is", r.Probe, r.Container)
		if podutil.IsInitContainer(&pod.Spec, r.Container) {
			ref.FieldPath = "spec.initContainers{" + r.Container + "}"
		} else {
			ref.FieldPath = "spec.containers{" + r.Container + "}"
		}
	}
	g.Recorder.Eventf(ref, nil, corev1.EventTypeWarning, ReasonRejected, "Verify",
		"%s not run: %s", what, r.Message)
}

func minPositive(a, b time.Duration) time.Duration {
	if a <= 0 || b < a {
		return b
	}
	return a
}
