// Command cache-bench is the client-go side of the cache_micro benchmark
// (tests/benches/cache_micro.rs): client-go v0.37.2's indexer, lister,
// work queues and shared informer on the workloads of codegen-runtime's
// micro-benchmarks (runtime/benches/informer.rs, runtime/benches/workqueue.rs),
// in one process, then one JSON line on stdout: per figure, nanoseconds
// per operation (one lookup, one list, one replace, one queue cycle, one
// dispatch run). The benchmark's Rust child prints the same line.
//
// Usage:
//
//	cache-bench [--only figure,figure,...]
//
// Every figure runs a warm-up, then a fixed time budget (at least a fixed
// number of runs for the slow ones) of which the median slice or run
// counts; see README.md for the workloads and the intended differences
// from the Rust side.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	runtimeapi "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

const (
	objects    = 100_000
	namespaces = 100
	// Objects of the dispatch figures.
	events = 10_000

	// The time budgets of tests/benches/cache_micro.rs.
	warmup = 100 * time.Millisecond
	budget = 400 * time.Millisecond
	// The budget is measured in this many slices; the median slice counts.
	slices = 5
	// Replace and dispatch: one untimed run, then runs until their budget
	// has passed and at least minRuns were made; the median run counts.
	replaceBudget  = time.Second
	dispatchBudget = 500 * time.Millisecond
	minRuns        = 5
)

func configMap(i int) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name:            fmt.Sprintf("cm-%d", i),
			Namespace:       fmt.Sprintf("ns-%d", i%namespaces),
			ResourceVersion: strconv.Itoa(i),
			Labels:          map[string]string{"app": fmt.Sprintf("app-%d", i%10)},
		},
	}
}

// measure calls batch (ops operations each) for the warm-up, then for
// slices slices of the budget, and returns nanoseconds per operation of the
// median slice, so that a slice disturbed by another process on the
// machine does not count.
func measure(ops int, batch func()) float64 {
	run := func(d time.Duration) float64 {
		start := time.Now()
		n := 0
		for {
			batch()
			n += ops
			if elapsed := time.Since(start); elapsed >= d {
				return float64(elapsed.Nanoseconds()) / float64(n)
			}
		}
	}
	run(warmup)
	results := make([]float64, slices)
	for i := range results {
		results[i] = run(budget / slices)
	}
	return median(results)
}

// measureRuns calls run (which times itself) once untimed, then until
// budget has passed and at least minRuns were made, and returns the
// nanoseconds of the median run.
func measureRuns(budget time.Duration, run func() time.Duration) float64 {
	run()
	var total time.Duration
	var runs []float64
	for len(runs) < minRuns || total < budget {
		elapsed := run()
		total += elapsed
		runs = append(runs, float64(elapsed.Nanoseconds()))
	}
	return median(runs)
}

func median(v []float64) float64 {
	sort.Float64s(v)
	return v[len(v)/2]
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "cache-bench: "+format+"\n", args...)
	os.Exit(1)
}

func main() {
	only := flag.String("only", "", "comma-separated figures to measure (default: all)")
	flag.Parse()
	selected := func(name string) bool {
		if *only == "" {
			return true
		}
		for _, f := range strings.Split(*only, ",") {
			if f == name {
				return true
			}
		}
		return false
	}
	figures := map[string]float64{}
	indexerFigures(selected, figures)
	// The 100,000-object cache is garbage now; collect it so that the
	// queue figures do not pay for it.
	runtime.GC()
	queueFigures(selected, figures)
	runtime.GC()
	dispatchFigures(selected, figures)
	line, err := json.Marshal(figures)
	if err != nil {
		fail("%v", err)
	}
	fmt.Println(string(line))
}

func indexerFigures(selected func(string) bool, figures map[string]float64) {
	items := make([]interface{}, objects)
	for i := range items {
		items[i] = configMap(i)
	}
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	if err := indexer.Replace(items, strconv.Itoa(objects)); err != nil {
		fail("replace: %v", err)
	}
	lister := corev1listers.NewConfigMapLister(indexer)
	keys := make([]string, objects)
	for i := range keys {
		keys[i] = fmt.Sprintf("ns-%d/cm-%d", i%namespaces, i)
	}

	if selected("get_by_key") {
		next, missing := 0, 0
		figures["get_by_key"] = measure(10_000, func() {
			for range 10_000 {
				next = (next + 7919) % objects
				if _, exists, _ := indexer.GetByKey(keys[next]); !exists {
					missing++
				}
			}
		})
		if missing != 0 {
			fail("get_by_key: %d keys missing", missing)
		}
	}

	// The same lookups, each followed by a read of the object found (the
	// length of its resourceVersion), as a caller of GetByKey reads it.
	if selected("get_by_key_read") {
		next, read := 0, 0
		figures["get_by_key_read"] = measure(10_000, func() {
			for range 10_000 {
				next = (next + 7919) % objects
				if obj, exists, _ := indexer.GetByKey(keys[next]); exists {
					read += len(obj.(*corev1.ConfigMap).ResourceVersion)
				}
			}
		})
		if read == 0 {
			fail("get_by_key_read: nothing read")
		}
	}

	// One namespace holds objects / namespaces = 1,000 objects. Every
	// object in ns-42 has app=app-2 (42 ≡ 2 mod 10), so the selector
	// matches all of them, as in the Rust benchmark.
	namespace := lister.ConfigMaps("ns-42")
	app := labels.SelectorFromSet(labels.Set{"app": "app-2"})
	listNamespace := func(name string, selector labels.Selector) {
		if !selected(name) {
			return
		}
		figures[name] = measure(10, func() {
			for range 10 {
				list, err := namespace.List(selector)
				if err != nil || len(list) != objects/namespaces {
					fail("%s: %d objects, %v", name, len(list), err)
				}
			}
		})
	}
	listNamespace("namespace_list_1k", labels.Everything())
	listNamespace("namespace_list_selector_1k", app)

	if selected("list_selector_100k") {
		figures["list_selector_100k"] = measure(1, func() {
			list, err := lister.List(app)
			if err != nil || len(list) != objects/10 {
				fail("list_selector_100k: %d objects, %v", len(list), err)
			}
		})
	}

	if selected("replace_100k") {
		rv := strconv.Itoa(objects)
		figures["replace_100k"] = measureRuns(replaceBudget, func() time.Duration {
			start := time.Now()
			if err := indexer.Replace(items, rv); err != nil {
				fail("replace: %v", err)
			}
			return time.Since(start)
		})
		if n := len(indexer.ListKeys()); n != objects {
			fail("replace_100k: %d objects after replace", n)
		}
	}
}

func queueFigures(selected func(string) bool, figures map[string]float64) {
	var next uint64
	if selected("queue_add_get_done") {
		queue := workqueue.NewTyped[uint64]()
		figures["queue_add_get_done"] = measure(100_000, func() {
			for range 100_000 {
				next++
				queue.Add(next % 1024)
				item, shutdown := queue.Get()
				if shutdown {
					fail("queue shut down")
				}
				queue.Done(item)
			}
		})
		queue.ShutDown()
	}

	// The default controller rate limiter; keys cycle over 1024 items so
	// the per-item backoff grows and every add goes through the delaying
	// queue.
	if selected("queue_add_rate_limited") {
		queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[uint64]())
		figures["queue_add_rate_limited"] = measure(100_000, func() {
			for range 100_000 {
				next++
				queue.AddRateLimited(next % 1024)
			}
		})
		queue.ShutDown()
	}

	// The success path: forget after every add.
	if selected("queue_add_rate_limited_forget") {
		queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[uint64]())
		figures["queue_add_rate_limited_forget"] = measure(100_000, func() {
			for range 100_000 {
				next++
				key := next % 1024
				queue.AddRateLimited(key)
				queue.Forget(key)
			}
		})
		queue.ShutDown()
	}
}

// listWatch serves one list and then one prepared watch to a reflector,
// in memory: the counterpart of the Rust informer's `from_stream`.
type listWatch struct {
	list    *corev1.ConfigMapList
	watcher *watch.FakeWatcher
	watched atomic.Bool
}

func (lw *listWatch) List(metav1.ListOptions) (runtimeapi.Object, error) {
	return lw.list, nil
}

func (lw *listWatch) Watch(metav1.ListOptions) (watch.Interface, error) {
	if lw.watched.Swap(true) {
		// Not expected: the prepared watch only ends when the informer stops.
		return watch.NewFake(), nil
	}
	return lw.watcher, nil
}

// IsWatchListSemanticsUnSupported: the reflector lists, then watches (no
// streaming list), as client-go's fake clients do.
func (lw *listWatch) IsWatchListSemanticsUnSupported() bool { return true }

// dispatch runs a shared informer with three counting handlers over lw and
// returns the time from Run until all three have handled expected adds and
// updates.
func dispatch(lw *listWatch, expected int) time.Duration {
	informer := cache.NewSharedIndexInformer(lw, &corev1.ConfigMap{}, 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	var remaining atomic.Int64
	remaining.Store(int64(3 * expected))
	done := make(chan struct{})
	count := func() {
		if remaining.Add(-1) == 0 {
			close(done)
		}
	}
	for range 3 {
		if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { count() },
			UpdateFunc: func(any, any) { count() },
		}); err != nil {
			fail("add event handler: %v", err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	start := time.Now()
	go func() {
		informer.RunWithContext(ctx)
		close(stopped)
	}()
	select {
	case <-done:
	case <-time.After(120 * time.Second):
		fail("handlers did not receive every event")
	}
	elapsed := time.Since(start)
	cancel()
	<-stopped
	return elapsed
}

func dispatchFigures(selected func(string) bool, figures map[string]float64) {
	// An initial list of 10,000 objects, then a watch that stays quiet.
	if selected("dispatch_initial_list_10k") {
		figures["dispatch_initial_list_10k"] = measureRuns(dispatchBudget, func() time.Duration {
			list := &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: strconv.Itoa(events)}}
			list.Items = make([]corev1.ConfigMap, events)
			for i := range list.Items {
				list.Items[i] = *configMap(i)
			}
			return dispatch(&listWatch{list: list, watcher: watch.NewFake()}, events)
		})
	}
	// An empty initial list, then one watch event per object: adds, then
	// an update for each.
	if selected("dispatch_watch_20k") {
		figures["dispatch_watch_20k"] = measureRuns(dispatchBudget, func() time.Duration {
			list := &corev1.ConfigMapList{ListMeta: metav1.ListMeta{ResourceVersion: "0"}}
			watcher := watch.NewFakeWithChanSize(2*events, false)
			for i := range events {
				watcher.Add(configMap(i))
			}
			for i := range events {
				watcher.Modify(configMap(i))
			}
			return dispatch(&listWatch{list: list, watcher: watcher}, 2*events)
		})
	}
}
