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

package series

import (
	"reflect"
	"testing"
)

func TestWriteReadDir(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadDir(dir); err == nil {
		t.Fatal("ReadDir of a directory without series: want an error")
	}
	b := Series{Name: "b", Title: "B", Start: "2026-12-05T03:00:00Z", Samples: []Sample{{T: 0}, {T: 1.5, Enrolled: 1, Native: 3}}}
	a := Series{Name: "a", Title: "A", Start: "2026-12-05T03:01:00Z", Samples: []Sample{{T: 0, Native: 2}}}
	for _, s := range []*Series{&b, &a} {
		if err := Write(dir, s); err != nil {
			t.Fatal(err)
		}
	}
	got, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []Series{a, b}; !reflect.DeepEqual(got, want) {
		t.Errorf("ReadDir = %+v, want %+v (sorted by name)", got, want)
	}
	if err := Write(dir, &Series{Name: "c", Start: "2026-12-05T03:00:00Z"}); err == nil {
		t.Error("Write of a series without samples: want an error")
	}
}
