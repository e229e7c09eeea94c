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
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func validRecovery() Recovery {
	return Recovery{Name: "3-hang-all", Title: "All 10 replicas hang", Start: "2026-12-05T03:00:00Z",
		NativeSeconds: 6.2, EnrolledSeconds: 44.1,
		Figures: &Figures{Avoided: 9, Agreed: 10, AddedP50Seconds: 31, AddedMaxSeconds: 38}}
}

func TestRecoveryValidate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*Recovery)
		want   []string // each a part of the error; none: valid
	}{
		{"valid", func(*Recovery) {}, nil},
		{"without figures", func(r *Recovery) { r.Figures = nil }, nil},
		{"zero seconds", func(r *Recovery) { r.NativeSeconds = 0 }, nil},
		{"empty name", func(r *Recovery) { r.Name = "" }, []string{`name "": must be a non-empty file name`}},
		{"a path for a name", func(r *Recovery) { r.Name = "../x" }, []string{"must be a non-empty file name"}},
		{"no title", func(r *Recovery) { r.Title = " " }, []string{"title: must not be empty"}},
		{"no start", func(r *Recovery) { r.Start = "" }, []string{`start "": must be an RFC 3339 time`}},
		{"negative native", func(r *Recovery) { r.NativeSeconds = -1 },
			[]string{"nativeSeconds -1: must be a finite number of seconds, not negative"}},
		{"negative enrolled", func(r *Recovery) { r.EnrolledSeconds = -0.5 },
			[]string{"enrolledSeconds -0.5: must be a finite number of seconds, not negative"}},
		{"not a number", func(r *Recovery) { r.EnrolledSeconds = math.NaN() }, []string{"enrolledSeconds NaN: must be a finite number"}},
		{"infinite", func(r *Recovery) { r.NativeSeconds = math.Inf(1) }, []string{"nativeSeconds +Inf: must be a finite number"}},
		{"negative figures", func(r *Recovery) { r.Figures.Avoided, r.Figures.Agreed = -1, -2 },
			[]string{"figures.avoided -1: must not be negative", "figures.agreed -2: must not be negative"}},
		{"median above the maximum", func(r *Recovery) { r.Figures.AddedP50Seconds = 40 },
			[]string{"figures.addedP50Seconds 40: must not be above figures.addedMaxSeconds 38"}},
		{"every error at once", func(r *Recovery) { r.Start, r.NativeSeconds, r.EnrolledSeconds = "today", -1, -1 },
			[]string{"start", "nativeSeconds", "enrolledSeconds"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := validRecovery()
			tc.change(&r)
			err := r.Validate()
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("want valid, got %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("want an error with %q, got none", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestWriteReadRecoveryDir(t *testing.T) {
	dir := t.TempDir()
	got, err := ReadRecoveryDir(dir)
	if err != nil || len(got) != 0 {
		t.Fatalf("ReadRecoveryDir of a report without recoveries = %v, %v; want none and no error", got, err)
	}
	b := validRecovery()
	a := Recovery{Name: "4-hang-kill", Title: "Hang, manager killed", Start: "2026-12-05T03:05:00Z", NativeSeconds: 6, EnrolledSeconds: 65}
	b.Name = "5-hang-all"
	for _, r := range []*Recovery{&b, &a} {
		if err := WriteRecovery(dir, r); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, Dir, RecoveryDir, "4-hang-kill.json")); err != nil {
		t.Errorf("want the file under storms/recovery: %v", err)
	}
	got, err = ReadRecoveryDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []Recovery{a, b}; !reflect.DeepEqual(got, want) {
		t.Errorf("ReadRecoveryDir = %+v, want %+v (sorted by name)", got, want)
	}

	// The series beside them are read as before: the recoveries are no series.
	s := Series{Name: "1-wrong-probe", Start: "2026-12-05T03:00:00Z", Samples: []Sample{{T: 0}}}
	if err := Write(dir, &s); err != nil {
		t.Fatal(err)
	}
	if all, err := ReadDir(dir); err != nil || len(all) != 1 || all[0].Name != s.Name {
		t.Errorf("ReadDir beside recoveries = %+v, %v; want only %q", all, err, s.Name)
	}

	bad := Recovery{Name: "bad", Title: "bad", Start: "2026-12-05T03:00:00Z", NativeSeconds: -3}
	if err := WriteRecovery(dir, &bad); err == nil || !strings.Contains(err.Error(), "nativeSeconds -3") {
		t.Errorf("WriteRecovery of a negative time = %v, want an error naming nativeSeconds", err)
	}
	path := filepath.Join(dir, Dir, RecoveryDir, "bad.json")
	if err := os.WriteFile(path, []byte(`{"name":"bad","title":"bad","start":"2026-12-05T03:00:00Z","nativeSeconds":1,"enrolledSeconds":-2}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadRecoveryDir(dir); err == nil || !strings.Contains(err.Error(), path+": ") ||
		!strings.Contains(err.Error(), "enrolledSeconds -2: must be a finite number of seconds, not negative") {
		t.Errorf("ReadRecoveryDir with a bad file = %v, want an error naming %s and enrolledSeconds", err, path)
	}
}
