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

// Package figures sets what enrolling changed beside the kubelet: for each moment the kubelet
// restarts, or would restart, a container (its liveness failure reached failureThreshold), the
// engine's verdict on the same failure makes the restart avoided (the engine held it) or agreed
// (the engine restarts it too, some time after the kubelet's moment). A Ledger counts each
// container instance's failure once, however often the decision judges it again, in bounded
// memory.
package figures

import (
	"time"

	"k8s.io/apimachinery/pkg/types"

	policyv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/policy/v1alpha1"
)

// Kind is what became of a kubelet restart.
type Kind string

const (
	// Avoided: the engine held the restart the kubelet made, or would have made.
	Avoided Kind = "Avoided"
	// Agreed: the engine restarts too.
	Agreed Kind = "Agreed"
)

// Verdict is the engine's verdict on one failure.
type Verdict struct {
	// Restart: the engine restarts the container (Enforce: its request was created; Shadow: it
	// would have been). Otherwise the restart is held for Reason.
	Restart bool
	Reason  policyv1alpha1.HoldReason
	// At is when the engine restarted, or would have: its request's creation, or its decision.
	At time.Time
}

// Figure is one kubelet moment classified.
type Figure struct {
	Kind   Kind
	Reason policyv1alpha1.HoldReason // set for Avoided
	// Added is how long after the kubelet's moment the engine restarted (Agreed only): 0 when the
	// engine was first, or the clocks say so.
	Added time.Duration
}

// Classify classifies the kubelet's moment (when the failure reached its threshold) against the
// engine's verdict on the same failure.
func Classify(kubelet time.Time, v Verdict) Figure {
	if !v.Restart {
		return Figure{Kind: Avoided, Reason: v.Reason}
	}
	f := Figure{Kind: Agreed}
	if !kubelet.IsZero() && v.At.After(kubelet) {
		f.Added = v.At.Sub(kubelet)
	}
	return f
}

// ShadowVerdict is the verdict of the engine on a Shadow pod's failure: a Shadow hold is its
// "would restart" (no other rule held it), any other hold is what the engine would have done.
func ShadowVerdict(reason policyv1alpha1.HoldReason, at time.Time) Verdict {
	if reason == policyv1alpha1.HoldShadow {
		return Verdict{Restart: true, At: at}
	}
	return Verdict{Reason: reason, At: at}
}

// Key is one container instance of one pod.
type Key struct {
	Pod         types.UID
	Container   string
	ContainerID string
}
