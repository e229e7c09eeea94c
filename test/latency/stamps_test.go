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
	"testing"
	"time"
)

func TestOperatorStamps(t *testing.T) {
	logs := `{"level":"info","ts":1764567000.1,"logger":"status-writer","msg":"liveness failure reported","pod":"ns/a","failedAt":"2026-12-01T05:00:00.100000001Z","sentAt":"2026-12-01T05:00:00.2Z","took":"100ms"}
{"level":"info","ts":1764567009.1,"logger":"status-writer","msg":"liveness failure reported","pod":"ns/a","failedAt":"2026-12-01T05:09:00Z"}
{"level":"info","ts":1764567000.1,"msg":"something else","pod":"ns/a","otherAt":"2026-12-01T05:00:00Z"}
2026-12-01T05:00:00.300Z	INFO	restart requested	{"controller": "policy-decision", "Pod": {"name":"b","namespace":"ns"}, "pod": "ns/b", "createdAt": "2026-12-01T05:00:00.3Z", "request": "b-app-1"}
2026-12-01T05:00:00.300Z	INFO	restart requested	not json {
garbage`
	got := OperatorStamps(logs, "liveness failure reported", "restart requested")
	want := map[string]map[string]time.Time{
		"ns/a": {"failedAt": time.Date(2026, 12, 1, 5, 0, 0, 100000001, time.UTC), "sentAt": time.Date(2026, 12, 1, 5, 0, 0, 2e8, time.UTC)},
		"ns/b": {"createdAt": time.Date(2026, 12, 1, 5, 0, 0, 3e8, time.UTC)},
	}
	if len(got) != len(want) {
		t.Fatalf("pods %v, want %v", got, want)
	}
	for pod, fields := range want {
		if len(got[pod]) != len(fields) {
			t.Fatalf("%s: %v, want %v", pod, got[pod], fields)
		}
		for k, v := range fields {
			if !got[pod][k].Equal(v) {
				t.Errorf("%s %s = %v, want %v", pod, k, got[pod][k], v)
			}
		}
	}
}
