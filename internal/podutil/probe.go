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

package podutil

import corev1 "k8s.io/api/core/v1"

// The API server's defaults of a probe (SetDefaults_Probe, SetDefaults_HTTPGetAction), written
// once: the pod webhook fills them into the probes it moves (internal/trust/probecontext), and the
// node daemon fills them again into what it reads (internal/daemon/prober).
const (
	DefaultProbeTimeoutSeconds   = 1
	DefaultProbePeriodSeconds    = 10
	DefaultProbeSuccessThreshold = 1
	DefaultProbeFailureThreshold = 3
	DefaultHTTPPath              = "/"
)

// DefaultHTTPGet fills what the API server defaults in an httpGet action: path / and scheme HTTP.
func DefaultHTTPGet(a *corev1.HTTPGetAction) {
	if a.Path == "" {
		a.Path = DefaultHTTPPath
	}
	if a.Scheme == "" {
		a.Scheme = corev1.URISchemeHTTP
	}
}
