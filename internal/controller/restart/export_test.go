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

package restart

// What the external tests read of the package: its metrics and a few formatters.
var (
	DecisionLatency   = decisionLatency
	RestartsHeld      = restartsHeld
	RestartsRequested = restartsRequested
	HeldNotConfirmed  = heldNotConfirmed
	HeldPods          = heldPods
	HoldsOverMaxHold  = holdsOverMaxHold
	OldestHold        = oldestHold
	Evictions         = evictions
	RestartAdded      = restartAdded
	RestartsAgreed    = restartsAgreed
	RestartsAvoided   = restartsAvoided
	Refusal           = refusal
)

const (
	ResultEvicted = resultEvicted
	ResultRefused = resultRefused
)
