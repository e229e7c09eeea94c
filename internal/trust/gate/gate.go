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
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/probecontext"
	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/trust/signature"
)

// ReasonRejected is the Warning event on a pod the node's NodePodProbe names whose probes the
// daemon does not run.
const ReasonRejected = "LivenessProbeRejected"

// DefaultUnknownKeyWait is how long a seal naming a key the daemon does not hold stays pending
// before it is refused.
const DefaultUnknownKeyWait = time.Minute

var (
	// Refused is the number of probes of the pods the node's NodePodProbe names that the daemon
	// does not run, by cause (pending ones included: pod-not-found, awaiting-seal, unknown-key).
	// A pod whose probes the daemon cannot tell (it has no such pod, or its probe context does not
	// decode) counts as one.
	Refused = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "enhanced_liveness_daemon_probes_refused",
		Help: "Probes of the pods the node's NodePodProbe names that the daemon does not run because the pod's probe " +
			"context is not sealed for it, by cause.",
	}, []string{"cause"})
	// Refusals counts the probes the daemon refused (not the pending ones), by cause.
	Refusals = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "enhanced_liveness_daemon_probe_refusals_total",
		Help: "Probes the daemon refused to run (each refusal once, with a Warning event on the pod), by cause.",
	}, []string{"cause"})
)

func init() { ctrlmetrics.Registry.MustRegister(Refused, Refusals) }

// Gate passes the node's NodePodProbe entries through Check and reports what it holds back: a
// Warning event on the pod when its probes are refused (once per pod and cause), and the metrics.
// A seal naming an unknown key stays pending for UnknownKeyWait, then is refused.
type Gate struct {
	Recorder       events.EventRecorder
	Clock          clock.PassiveClock
	UnknownKeyWait time.Duration

	mu sync.Mutex
	// refused holds the cause last reported per pod UID.
	refused map[types.UID]string
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

type unknownKey struct {
	uid  types.UID
	seal string
}

// Entry is one NodePodProbe entry as the gate judged it.
type Entry struct {
	appsv1alpha1.PodProbe
	// Run are the probes the pod's sealed probe context gives it: the daemon runs them.
	Run []probecontext.Probe
	// Held are the probes of an entry whose probes are not run, as the pod's probe context
	// names them (unverified: names and containers only, Probe nil), for the report to list
	// them as not probed. None when the daemon has no such pod or its context does not decode.
	Held []probecontext.Probe
	// Why the Held probes are not run: "<cause>: <message>" of the gate's verdict.
	Why string
}

// Filter judges every entry, and says after how long to filter again for a pending verdict that
// time alone can change (zero: none).
func (g *Gate) Filter(entries []appsv1alpha1.PodProbe, pods map[types.UID]*corev1.Pod, keys signature.KeySet) ([]Entry, time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	p := g.newPass(keys)
	out := make([]Entry, 0, len(entries))
	for i := range entries {
		pp := &entries[i]
		pod := pods[pp.UID]
		e := Entry{PodProbe: *pp}
		var v *Verdict
		e.Run, v = check(pp, pod, p.verify, p.decodeOnce)
		if v != nil {
			e.Held, e.Why = held(pod), v.Cause+": "+v.Message
			p.refuse(pp, pod, *v, max(len(e.Held), 1))
		}
		out = append(out, e)
	}
	// What this pass saw replaces what the gate remembered: a pod or seal gone is forgotten.
	g.refused, g.unknownSince, g.verified = p.seen, p.unknown, p.verified
	Refused.Reset()
	for cause, n := range p.counts {
		Refused.WithLabelValues(cause).Set(n)
	}
	return out, p.retry
}

// held names the probes the pod's probe context, unverified, gives it: only their names leave.
func held(pod *corev1.Pod) []probecontext.Probe {
	if pod == nil {
		return nil
	}
	probes, _, err := probecontext.PodProbes(pod)
	if err != nil {
		return nil
	}
	for i := range probes {
		probes[i].Probe = nil
	}
	return probes
}

// pass is what one Filter call learns about the refusals, unknown keys and verified seals.
type pass struct {
	g     *Gate
	keys  signature.KeySet
	now   time.Time
	wait  time.Duration
	retry time.Duration

	seen     map[types.UID]string
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
		seen:     map[types.UID]string{},
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

// refuse counts a refusal of n probes and tells it once; an unknown key stays pending (untold,
// retried) for the gate's wait from its first sighting.
func (p *pass) refuse(pp *appsv1alpha1.PodProbe, pod *corev1.Pod, v Verdict, n int) {
	if v.Cause == CauseUnknownKey {
		k := unknownKey{pp.UID, pod.Annotations[appsv1alpha1.AnnotationProbeContextSeal]}
		since, ok := p.g.unknownSince[k]
		if !ok {
			since = p.now
		}
		p.unknown[k] = since
		if left := p.wait - p.now.Sub(since); left > 0 {
			p.retry = minPositive(p.retry, left)
		} else {
			v.Pending = false
		}
	}
	p.counts[v.Cause] += float64(n)
	if v.Pending {
		return
	}
	p.seen[pp.UID] = v.Cause
	if p.g.refused[pp.UID] != v.Cause {
		Refusals.WithLabelValues(v.Cause).Add(float64(n))
		p.g.report(pod, v)
	}
}

// report sends the Warning event of a refusal on the pod (none when the daemon knows no such pod).
func (g *Gate) report(pod *corev1.Pod, v Verdict) {
	if g.Recorder == nil || pod == nil {
		return
	}
	ref := &corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID}
	g.Recorder.Eventf(ref, nil, corev1.EventTypeWarning, ReasonRejected, "Verify",
		"the liveness probes of this pod, which the node's NodePodProbe names, are not run: %s", v.Message)
}

func minPositive(a, b time.Duration) time.Duration {
	if a <= 0 || b < a {
		return b
	}
	return a
}
