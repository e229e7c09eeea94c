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

package apps

import (
	"context"
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/enhanced-liveness/enhanced-liveness-operator/api/apps/v1alpha1"
)

// nppWriteCounter counts the write requests the reconciler sends for each NodePodProbe.
type nppWriteCounter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *nppWriteCounter) count(obj client.Object) {
	if _, ok := obj.(*appsv1alpha1.NodePodProbe); !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[obj.GetName()]++
}

func (c *nppWriteCounter) get(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[name]
}

type countingClient struct {
	client.Client
	c *nppWriteCounter
}

func (w countingClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	w.c.count(obj)
	return w.Client.Create(ctx, obj, opts...)
}

func (w countingClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	w.c.count(obj)
	return w.Client.Update(ctx, obj, opts...)
}

func (w countingClient) Patch(ctx context.Context, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
	w.c.count(obj)
	return w.Client.Patch(ctx, obj, p, opts...)
}

func (w countingClient) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	w.c.count(obj)
	return w.Client.Delete(ctx, obj, opts...)
}

func (w countingClient) Status() client.SubResourceWriter {
	return countingStatus{w.Client.Status(), w.c}
}

type countingStatus struct {
	client.SubResourceWriter
	c *nppWriteCounter
}

func (w countingStatus) Patch(ctx context.Context, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
	w.c.count(obj)
	return w.SubResourceWriter.Patch(ctx, obj, p, opts...)
}

func (w countingStatus) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	w.c.count(obj)
	return w.SubResourceWriter.Update(ctx, obj, opts...)
}
