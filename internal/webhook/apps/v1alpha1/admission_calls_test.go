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
	"bufio"
	"bytes"
	"strconv"
	"strings"

	. "github.com/onsi/gomega"
	"k8s.io/client-go/kubernetes"
)

// webhookCalls is how many admission calls the API server made to the webhook name for operation
// (CREATE, UPDATE), read from its own metrics: what a request costs in round trips, as the
// API server counts them.
func webhookCalls(name, operation string) float64 {
	cs, err := kubernetes.NewForConfig(cfg)
	Expect(err).NotTo(HaveOccurred())
	raw, err := cs.RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	Expect(err).NotTo(HaveOccurred())
	const family = "apiserver_admission_webhook_admission_duration_seconds_count{"
	var n float64
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, family) || !strings.Contains(line, `name="`+name+`"`) ||
			!strings.Contains(line, `operation="`+operation+`"`) {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		Expect(err).NotTo(HaveOccurred(), line)
		n += v
	}
	Expect(sc.Err()).NotTo(HaveOccurred())
	return n
}
