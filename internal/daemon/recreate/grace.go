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

// Package recreate is the node daemon's ContainerRecreateRequest executor: it runs a container's
// preStop hook, stops it through CRI with the right grace period, waits for the kubelet to start
// a new instance, and reports the outcome in the request's status.
package recreate

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

// The grace period itself is the request's (appsv1alpha1.ContainerRecreateRequest.GracePeriodSeconds).

// StopTimeout is the timeout passed to CRI StopContainer: the total grace period minus the whole
// seconds the preStop hook took, never below appsv1alpha1.MinTerminationGracePeriodSeconds.
func StopTimeout(total int64, preStop time.Duration) int64 {
	t := total - int64(preStop/time.Second)
	if t < appsv1alpha1.MinTerminationGracePeriodSeconds {
		return appsv1alpha1.MinTerminationGracePeriodSeconds
	}
	return t
}

// RunsPreStop reports whether the preStop hook runs at all: the kubelet skips it when the grace
// period is zero, and so do we.
func RunsPreStop(c *corev1.Container, total int64) bool {
	return c != nil && c.Lifecycle != nil && c.Lifecycle.PreStop != nil && total > 0
}
