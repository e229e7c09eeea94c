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

package latency

import (
	"encoding/json"
	"strings"
	"time"
)

// OperatorStamps reads the timing lines the manager and the daemon log for each restart (their
// messages are msgs; docs/e2e.md lists them) from logs in either zap encoder (JSON, or console
// with the fields as a JSON object at the end). It returns, per "pod" field, every field that
// holds an RFC 3339 time; a pod's first line of a message wins.
func OperatorStamps(logs string, msgs ...string) map[string]map[string]time.Time {
	out := map[string]map[string]time.Time{}
	seen := map[string]bool{}
	for line := range strings.SplitSeq(logs, "\n") {
		msg := ""
		for _, m := range msgs {
			if strings.Contains(line, m) {
				msg = m
			}
		}
		i := strings.IndexByte(line, '{')
		if msg == "" || i < 0 {
			continue
		}
		var fields map[string]any
		if json.Unmarshal([]byte(line[i:]), &fields) != nil {
			continue
		}
		if m, ok := fields["msg"].(string); ok && m != msg {
			continue
		}
		pod, _ := fields["pod"].(string)
		if pod == "" || seen[pod+"\x00"+msg] {
			continue
		}
		seen[pod+"\x00"+msg] = true
		if out[pod] == nil {
			out[pod] = map[string]time.Time{}
		}
		for k, v := range fields {
			s, ok := v.(string)
			if !ok || !strings.HasSuffix(k, "At") {
				continue
			}
			if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
				out[pod][k] = t
			}
		}
	}
	return out
}
