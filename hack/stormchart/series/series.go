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

// Package series is the file format of the restart counts that the real-node storm specs sample
// over time, an enrolled workload beside its native twin, and of the time a workload that really
// hung took to recover, enrolled and native: test/e2e writes them into the e2e report directory
// and hack/stormchart draws them.
package series

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Dir is the directory under the e2e report directory that holds one file per spec.
const Dir = "storms"

// Series is the restart counts of one storm spec over time.
type Series struct {
	// Name identifies the spec; the file is <Name>.json.
	Name string `json:"name"`
	// Title says what happened, in a few words.
	Title string `json:"title"`
	// Start is when the sickness began (t = 0), RFC 3339.
	Start string `json:"start"`
	// Samples are in time order.
	Samples []Sample `json:"samples"`
}

// Sample is the total restart count of each workload's containers at T seconds after Start.
type Sample struct {
	T        float64 `json:"t"`
	Enrolled int32   `json:"enrolled"`
	Native   int32   `json:"native"`
}

// Validate reports what makes s unusable for a chart, naming the field and the rule.
func (s *Series) Validate() error {
	var errs []error
	if s.Name == "" || strings.ContainsAny(s.Name, "/\\") {
		errs = append(errs, fmt.Errorf("name %q: must be a non-empty file name", s.Name))
	}
	if _, err := time.Parse(time.RFC3339, s.Start); err != nil {
		errs = append(errs, fmt.Errorf("series %q: start %q: must be an RFC 3339 time", s.Name, s.Start))
	}
	if len(s.Samples) == 0 {
		errs = append(errs, fmt.Errorf("series %q: samples: must have at least 1 item", s.Name))
	}
	for i, p := range s.Samples {
		if p.T < 0 || p.Enrolled < 0 || p.Native < 0 {
			errs = append(errs, fmt.Errorf("series %q: samples[%d]: t and the counts must not be negative", s.Name, i))
		}
		if i > 0 && p.T < s.Samples[i-1].T {
			errs = append(errs, fmt.Errorf("series %q: samples[%d].t: must not be before samples[%d].t", s.Name, i, i-1))
		}
	}
	return errors.Join(errs...)
}

// Write stores s as <dir>/storms/<name>.json.
func Write(dir string, s *Series) error {
	return writeJSON(filepath.Join(dir, Dir), s.Name, s)
}

// record is a file of the report: it names itself and says what makes it unusable.
type record interface{ Validate() error }

// writeJSON validates r and stores it as <out>/<name>.json.
func writeJSON(out, name string, r record) error {
	if err := r.Validate(); err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, name+".json"), append(b, '\n'), 0o644)
}

// readJSON reads and validates every <dir>/*.json, sorted by name.
func readJSON[T any, P interface {
	*T
	record
}](dir string, name func(*T) string) ([]T, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(paths))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		var r T
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if err := P(&r).Validate(); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b T) int { return strings.Compare(name(&a), name(&b)) })
	return out, nil
}

// ReadDir reads every series of <dir>/storms, sorted by name.
func ReadDir(dir string) ([]Series, error) {
	out, err := readJSON(filepath.Join(dir, Dir), func(s *Series) string { return s.Name })
	if err == nil && len(out) == 0 {
		return nil, fmt.Errorf("no series in %s: run the storm specs of make test-e2e first", filepath.Join(dir, Dir))
	}
	return out, err
}
