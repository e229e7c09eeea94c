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

package v1alpha1

import (
	"bytes"

	. "github.com/onsi/gomega"
	"k8s.io/client-go/kubernetes"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

// webhookCalls is how many admission calls the API server made to the webhook name for operation
// (CREATE, UPDATE), read from its own metrics: what a request costs in round trips, as the
// API server counts them.
func webhookCalls(name, operation string) float64 {
	cs, err := kubernetes.NewForConfig(cfg)
	Expect(err).NotTo(HaveOccurred())
	raw, err := cs.RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	Expect(err).NotTo(HaveOccurred())
	m, err := testutil.ParseMetrics(bytes.NewReader(raw))
	Expect(err).NotTo(HaveOccurred())
	return m.Sum("apiserver_admission_webhook_admission_duration_seconds_count",
		`name="`+name+`"`, `operation="`+operation+`"`)
}
