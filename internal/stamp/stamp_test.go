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

package stamp

import (
	"testing"
	"time"
)

func TestStamp(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 890, time.FixedZone("CET", 3600))
	if got, want := Seconds(at), "2026-03-04T04:06:07Z"; got != want {
		t.Errorf("Seconds = %q, want %q", got, want)
	}
	if got, want := Nano(at), "2026-03-04T04:06:07.00000089Z"; got != want {
		t.Errorf("Nano = %q, want %q", got, want)
	}
}
