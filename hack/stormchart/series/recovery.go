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
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"time"
)

// RecoveryDir is the directory under Dir that holds one Recovery per spec; a directory of its
// own, so that ReadDir of the series does not meet them.
const RecoveryDir = "recovery"

// Recovery is how long a workload that really hung (a hang a restart cures) took to be whole
// again, enrolled beside its native twin: the other side of the restarts enrolling avoids.
type Recovery struct {
	// Name identifies the spec; the file is recovery/<Name>.json.
	Name string `json:"name"`
	// Title says what happened, in a few words.
	Title string `json:"title"`
	// Start is when every pod began to hang, RFC 3339.
	Start string `json:"start"`
	// NativeSeconds is the time from Start until every pod of the native twin was restarted and
	// Ready again.
	NativeSeconds float64 `json:"nativeSeconds"`
	// EnrolledSeconds is the same for the enrolled workload.
	EnrolledSeconds float64 `json:"enrolledSeconds"`
	// Figures are the enrolled workload's figures as its policy reports them; nil without a policy.
	Figures *Figures `json:"figures,omitempty"`
}

// Figures are the counts and added times a policy's status reports for the enrolled workload.
type Figures struct {
	Avoided         int32 `json:"avoided"`
	Agreed          int32 `json:"agreed"`
	AddedP50Seconds int32 `json:"addedP50Seconds"`
	AddedMaxSeconds int32 `json:"addedMaxSeconds"`
}

// Validate reports what makes r unusable for a chart, naming the field and the rule.
func (r *Recovery) Validate() error {
	var errs []error
	if r.Name == "" || strings.ContainsAny(r.Name, "/\\") {
		errs = append(errs, fmt.Errorf("name %q: must be a non-empty file name", r.Name))
	}
	if strings.TrimSpace(r.Title) == "" {
		errs = append(errs, fmt.Errorf("recovery %q: title: must not be empty", r.Name))
	}
	if _, err := time.Parse(time.RFC3339, r.Start); err != nil {
		errs = append(errs, fmt.Errorf("recovery %q: start %q: must be an RFC 3339 time", r.Name, r.Start))
	}
	for _, f := range []struct {
		field string
		v     float64
	}{{"nativeSeconds", r.NativeSeconds}, {"enrolledSeconds", r.EnrolledSeconds}} {
		if math.IsNaN(f.v) || math.IsInf(f.v, 0) || f.v < 0 {
			errs = append(errs, fmt.Errorf("recovery %q: %s %v: must be a finite number of seconds, not negative", r.Name, f.field, f.v))
		}
	}
	if f := r.Figures; f != nil {
		for _, c := range []struct {
			field string
			v     int32
		}{{"avoided", f.Avoided}, {"agreed", f.Agreed}, {"addedP50Seconds", f.AddedP50Seconds}, {"addedMaxSeconds", f.AddedMaxSeconds}} {
			if c.v < 0 {
				errs = append(errs, fmt.Errorf("recovery %q: figures.%s %d: must not be negative", r.Name, c.field, c.v))
			}
		}
		if f.AddedP50Seconds > f.AddedMaxSeconds {
			errs = append(errs, fmt.Errorf("recovery %q: figures.addedP50Seconds %d: must not be above figures.addedMaxSeconds %d",
				r.Name, f.AddedP50Seconds, f.AddedMaxSeconds))
		}
	}
	return errors.Join(errs...)
}

// WriteRecovery stores r as <dir>/storms/recovery/<name>.json.
func WriteRecovery(dir string, r *Recovery) error {
	return writeJSON(filepath.Join(dir, Dir, RecoveryDir), r.Name, r)
}

// ReadRecoveryDir reads every recovery of <dir>/storms/recovery, sorted by name; none is no
// error (a report of the storm specs only).
func ReadRecoveryDir(dir string) ([]Recovery, error) {
	return readJSON(filepath.Join(dir, Dir, RecoveryDir), func(r *Recovery) string { return r.Name })
}
