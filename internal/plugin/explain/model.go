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

package explain

import "time"

// Modes a container can be in, as explain names them.
const (
	// ModeEnforce: the pod's liveness probes were moved to the operator, which restarts it.
	ModeEnforce = "Enforce"
	// ModeShadow: the pod kept its native liveness probes and the kubelet restarts it; the
	// operator probes beside it and records what it would have done.
	ModeShadow = "Shadow"
	// ModeNative: the pod is not enrolled; only the kubelet probes it.
	ModeNative = "native"
)

// Explanation is what explain says of one pod. Its JSON form is the plugin's `-o json` output.
type Explanation struct {
	Pod       string `json:"pod"`
	Namespace string `json:"namespace"`
	Node      string `json:"node,omitempty"`
	// Mode is Enforce, Shadow or native; ModeNote says why in plain words.
	Mode     string    `json:"mode"`
	ModeNote string    `json:"modeNote"`
	Workload *Workload `json:"workload,omitempty"`
	// Policies are the EnhancedLivenessPolicies of the namespace that select the pod.
	Policies   []Policy    `json:"policies,omitempty"`
	Containers []Container `json:"containers"`
	// Evictions are the evictions of the pod's workload the governing policies record.
	Evictions []Eviction `json:"evictions,omitempty"`
	// Figures are what enrolling avoided and cost for the pod's workload since each governing
	// policy's figures window began (status.figures).
	Figures []Figures `json:"figures,omitempty"`
	// Notes say what could not be read, and so what the explanation lacks.
	Notes []string `json:"notes,omitempty"`
}

// Workload is the pod's top controller as explain could read it.
type Workload struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
}

// Policy is a governing policy and the mode it says now.
type Policy struct {
	Name string `json:"name"`
	Mode string `json:"mode"`
}

// Container is one container the operator probes, or one with a native liveness probe.
type Container struct {
	Name string `json:"name"`
	// Probe is the liveness probe as the node daemon runs it (explicit defaults, named ports
	// resolved); empty for a container the operator does not probe.
	Probe string `json:"probe,omitempty"`
	// ProbeProblem says why a probe of the pod's probe context is not run.
	ProbeProblem string `json:"probeProblem,omitempty"`
	// NativeProbe: the container keeps its native livenessProbe (the kubelet runs it).
	NativeProbe bool `json:"nativeProbe,omitempty"`
	// State is Passing, Failing, NotProbed or Unknown (no result readable).
	State string `json:"state"`
	// Results are the last results known, newest first.
	Results  []Result `json:"results,omitempty"`
	Decision Decision `json:"decision"`
	// Hold is the workload's record of a doubt hold of this container, when there is one.
	Hold *Hold `json:"hold,omitempty"`
	// Kubelet is what the kubelet did (Shadow, native) or would have done (Enforce).
	Kubelet string `json:"kubelet"`
	// Restarts is the container's restart count.
	Restarts int32 `json:"restarts"`
	// Requests are the ContainerRecreateRequests for the container, newest first.
	Requests []Request `json:"requests,omitempty"`
}

// Result is one probe result: from the node's report (the daemon's state) or from an Unhealthy
// event (the output of a failure).
type Result struct {
	Time    time.Time `json:"time"`
	Outcome string    `json:"outcome"`
	Message string    `json:"message,omitempty"`
	// Source is "report" or "event".
	Source string `json:"source"`
	// Count is how many times an event said it (1 for a report).
	Count int32 `json:"count,omitempty"`
}

// Decision is what the operator decides now on the container's failure.
type Decision struct {
	// Verdict is None (nothing to decide), Held, RestartRequested or Evicted.
	Verdict string `json:"verdict"`
	// Reason is the hold reason; Kind says how such a hold ends (Budget, Doubt, Choice).
	Reason string `json:"reason,omitempty"`
	Kind   string `json:"kind,omitempty"`
	// Rule is the decision's own words, with the numbers it compared.
	Rule  string     `json:"rule,omitempty"`
	Since *time.Time `json:"since,omitempty"`
	// EndsWhen says what ends the hold.
	EndsWhen string `json:"endsWhen,omitempty"`
}

// Hold is a RestartHold: the workload's doubt hold of a container.
type Hold struct {
	Name       string     `json:"name"`
	Reason     string     `json:"reason"`
	Onset      time.Time  `json:"onset"`
	Canaries   int32      `json:"canaries"`
	NextCanary *time.Time `json:"nextCanary,omitempty"`
	// Canary is the restart (or eviction) being judged now, when there is one.
	Canary   string     `json:"canary,omitempty"`
	Released *time.Time `json:"released,omitempty"`
}

// Request is a ContainerRecreateRequest and its outcome.
type Request struct {
	Name    string    `json:"name"`
	Created time.Time `json:"created"`
	Phase   string    `json:"phase"`
	Message string    `json:"message,omitempty"`
}

// Eviction is an eviction of the pod, or of a pod its workload replaced, that a governing policy
// records: the pod webhook steers the workload's new pods away from its node until it expires.
type Eviction struct {
	Policy    string    `json:"policy"`
	Pod       string    `json:"pod"`
	Node      string    `json:"node"`
	Container string    `json:"container"`
	Time      time.Time `json:"time"`
	Expires   time.Time `json:"expires"`
}

// Figures are a policy's figures for the pod's workload in one mode: the kubelet's restarts the
// engine held (avoided) or made too (agreed), and how much later it made them.
type Figures struct {
	Policy          string           `json:"policy"`
	Mode            string           `json:"mode"`
	Since           time.Time        `json:"since"`
	Avoided         int32            `json:"avoided"`
	AvoidedByReason map[string]int64 `json:"avoidedByReason,omitempty"`
	Agreed          int32            `json:"agreed"`
	AddedP50Seconds int32            `json:"addedP50Seconds"`
	AddedMaxSeconds int32            `json:"addedMaxSeconds"`
}
