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

package testutil

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

// PrintedRow returns the row the API server prints for the object at path (what `kubectl get`
// shows, e.g. "/apis/policy.enhancedliveness.io/v1alpha1/namespaces/ns/enhancedlivenesspolicies/p"):
// each column's name and its cell, "" for an empty one.
func PrintedRow(ctx context.Context, cfg *rest.Config, path string) (map[string]string, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(cfg.Host, "/")+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %s", path, resp.Status, body)
	}
	var table metav1.Table
	if err := json.Unmarshal(body, &table); err != nil {
		return nil, err
	}
	if len(table.Rows) != 1 {
		return nil, fmt.Errorf("GET %s: %d rows, want 1", path, len(table.Rows))
	}
	row := map[string]string{}
	for i, c := range table.ColumnDefinitions {
		row[c.Name] = ""
		if v := table.Rows[0].Cells[i]; v != nil {
			row[c.Name] = fmt.Sprint(v)
		}
	}
	return row, nil
}
