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

package main

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/enhanced-liveness/enhanced-liveness-operator/internal/testutil"
)

// metrics is one scrape of the manager's /metrics (testutil.Metrics) with the benchmark's readings.
type metrics testutil.Metrics

// The scrapes are frequent during a round: no gzip, which would cost the manager CPU that the
// benchmark would then count as its own.
var httpClient = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableCompression: true}}

func scrape(ctx context.Context, url string) (metrics, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", url, resp.Status)
	}
	m, err := testutil.ParseMetrics(resp.Body)
	return metrics(m), err
}

// sum adds the series of a metric whose labels contain every one of match (`key="value"`).
func (m metrics) sum(name string, match ...string) float64 {
	return testutil.Metrics(m).Sum(name, match...)
}

// decisions is every decision counted by the decision controller: requests created and holds.
func (m metrics) decisions() float64 {
	return m.sum("enhanced_liveness_restarts_requested_total") + m.sum("enhanced_liveness_restarts_held_total")
}

// latencyByVerb is the manager's mean API request latency per verb between two scrapes, e.g.
// "POST 12ms" (rest_client_request_duration_seconds: the request itself, after any client-side
// rate limit wait, which rest_client_rate_limiter_duration_seconds counts).
func latencyByVerb(before, after metrics) string {
	sum, count := map[string]float64{}, map[string]float64{}
	for series, v := range after {
		base, labels, _ := strings.Cut(series, "{")
		_, verb, ok := strings.Cut(labels, `verb="`)
		if !ok {
			continue
		}
		verb, _, _ = strings.Cut(verb, `"`)
		switch base {
		case "rest_client_request_duration_seconds_sum":
			sum[verb] += v - before[series]
		case "rest_client_request_duration_seconds_count":
			count[verb] += v - before[series]
		}
	}
	var parts []string
	for verb, n := range count {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%s %.0fms", verb, 1000*sum[verb]/n))
		}
	}
	slices.Sort(parts)
	wait := after.sum("rest_client_rate_limiter_duration_seconds_sum") - before.sum("rest_client_rate_limiter_duration_seconds_sum")
	return strings.Join(parts, ", ") + fmt.Sprintf("; client-side rate limit waits %.1fs in all", wait)
}

// heldByReason summarises the holds between two scrapes, e.g. "MaxUnavailable 200".
func heldByReason(before, after metrics) string {
	var parts []string
	for series, v := range after {
		base, labels, _ := strings.Cut(series, "{")
		if base != "enhanced_liveness_restarts_held_total" {
			continue
		}
		_, reason, _ := strings.Cut(labels, `reason="`)
		reason, _, _ = strings.Cut(reason, `"`)
		if n := v - before[series]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %.0f", reason, n))
		}
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

// requestsByMethod summarises the manager's API requests between two scrapes, e.g.
// "GET 12, PATCH 3, POST 800" (controller-runtime's rest_client_requests_total).
func requestsByMethod(before, after metrics) string {
	byMethod := map[string]float64{}
	for series, v := range after {
		base, labels, _ := strings.Cut(series, "{")
		if base != "rest_client_requests_total" {
			continue
		}
		_, method, ok := strings.Cut(labels, `method="`)
		if !ok {
			continue
		}
		method, _, _ = strings.Cut(method, `"`)
		byMethod[method] += v - before[series]
	}
	var parts []string
	for method, n := range byMethod {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%s %.0f", method, n))
		}
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

// idle waits until the manager's workqueues have been empty for quiet (every controller has
// caught up), or ctx ends.
func idle(ctx context.Context, url string, quiet time.Duration) error {
	var since time.Time
	for {
		m, err := scrape(ctx, url)
		if err != nil {
			return err
		}
		if m.sum("workqueue_depth") == 0 {
			if since.IsZero() {
				since = time.Now()
			}
			if time.Since(since) >= quiet {
				return nil
			}
		} else {
			since = time.Time{}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
