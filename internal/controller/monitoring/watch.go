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

package monitoring

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	toolscache "k8s.io/client-go/tools/cache"
)

// watcher follows the served kinds in the operator namespace, so that a deleted or edited object
// is put back at once rather than at the next interval. It lives only while the kinds are
// served: an informer on a kind that went away would retry its list for ever.
type watcher struct {
	factory dynamicinformer.DynamicSharedInformerFactory
	stopCh  chan struct{}
}

// startWatch starts informers on resources in namespace; an event of an object named in names
// signals changed (without blocking: one pending signal is enough, the sync puts every object in
// shape).
func startWatch(dyn dynamic.Interface, namespace string, resources []schema.GroupVersionResource,
	names []string, changed chan<- struct{}) (*watcher, error) {
	w := &watcher{
		factory: dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, namespace, nil),
		stopCh:  make(chan struct{}),
	}
	signal := func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	h := toolscache.FilteringResourceEventHandler{
		// The namespace may hold other PrometheusRules and ServiceMonitors: not ours to keep.
		FilterFunc: func(obj any) bool {
			if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			m, err := meta.Accessor(obj)
			return err == nil && slices.Contains(names, m.GetName())
		},
		Handler: toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { signal() },
			UpdateFunc: func(any, any) { signal() },
			DeleteFunc: func(any) { signal() },
		},
	}
	for _, r := range resources {
		if _, err := w.factory.ForResource(r).Informer().AddEventHandler(h); err != nil {
			w.factory.Shutdown()
			return nil, fmt.Errorf("watching %s: %w", r.Resource, err)
		}
	}
	w.factory.Start(w.stopCh)
	return w, nil
}

// stop ends the informers; a nil watcher is a no-op.
func (w *watcher) stop() {
	if w == nil {
		return
	}
	close(w.stopCh)
	w.factory.Shutdown()
}
