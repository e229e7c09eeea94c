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

package recreate

import (
	"fmt"
	"strings"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

// Summarize derives the request's phase and message from its containers' states. A request past
// its deadline is not failed here: the manager owns timeouts.
func Summarize(policy appsv1alpha1.ContainerRecreateRequestFailurePolicy, states []appsv1alpha1.ContainerRecreateState) (appsv1alpha1.ContainerRecreateRequestPhase, string) {
	var ignored []string
	var waiting *appsv1alpha1.ContainerRecreateState
	for i, s := range states {
		switch {
		case s.Phase == appsv1alpha1.RecreateFailed && policy != appsv1alpha1.FailurePolicyIgnore:
			return appsv1alpha1.RecreateFailed, fmt.Sprintf("container %s: %s", s.Name, s.Message)
		case s.Phase == appsv1alpha1.RecreateFailed:
			ignored = append(ignored, fmt.Sprintf("%s: %s", s.Name, s.Message))
		case s.Phase != appsv1alpha1.RecreateSucceeded && waiting == nil:
			waiting = &states[i]
		}
	}
	if waiting != nil {
		return appsv1alpha1.RecreateRecreating, fmt.Sprintf("container %s: %s", waiting.Name, waiting.Message)
	}
	if len(ignored) > 0 {
		return appsv1alpha1.RecreateSucceeded, fmt.Sprintf("finished; not restarted (failurePolicy Ignore): %s", strings.Join(ignored, "; "))
	}
	return appsv1alpha1.RecreateSucceeded, fmt.Sprintf("all %d container(s) restarted", len(states))
}
