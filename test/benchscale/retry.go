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
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// retry runs fn again, with backoff, while it fails the way an overloaded API server fails
// (timeout, 429, 5xx), as the kubelets and daemons the benchmark plays would. A create that
// timed out may still have happened: fn sees the attempt number to tell.
func retry(ctx context.Context, fn func(attempt int) error) error {
	var err error
	for attempt := range 8 {
		if err = fn(attempt); err == nil || !transient(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(1<<attempt) * 500 * time.Millisecond):
		}
	}
	return err
}

func transient(err error) bool {
	return apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) || apierrors.IsTooManyRequests(err) ||
		apierrors.IsInternalError(err) || apierrors.IsServiceUnavailable(err) || apierrors.IsUnexpectedServerError(err)
}

// create creates obj, retrying; a retry that finds the object created by an earlier attempt
// reads it instead.
func create(ctx context.Context, c client.Client, obj client.Object) error {
	return retry(ctx, func(attempt int) error {
		err := c.Create(ctx, obj)
		if attempt > 0 && apierrors.IsAlreadyExists(err) {
			return c.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		}
		return err
	})
}

// minAvailable is the memory the benchmark leaves to the machine's other users: it stops
// growing the cluster below it rather than push the machine into swapping or the OOM killer.
const minAvailable = 3 << 30

// memAvailable is /proc/meminfo's MemAvailable.
func memAvailable() (uint64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "MemAvailable:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no MemAvailable in /proc/meminfo")
}

func checkMemory() error {
	avail, err := memAvailable()
	if err != nil {
		return err
	}
	if avail < minAvailable {
		return fmt.Errorf("the machine has %.1f GiB available, less than the %.0f GiB the benchmark leaves to others: "+
			"it cannot hold this size", float64(avail)/(1<<30), float64(minAvailable)/(1<<30))
	}
	return nil
}
