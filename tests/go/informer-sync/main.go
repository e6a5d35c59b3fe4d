// Command informer-sync is the client-go baseline of the informer_sync
// benchmark (tests/benches/informer_sync.rs): one initial sync of the
// benchmark's Widgets through the informer that Kubernetes' code generators
// produce for a custom resource (generated/, see generate.sh), then one line
// on stdout in the format of the Rust benchmark's child processes:
//
//	<sync seconds> <peak RSS in KiB (VmHWM)>
//
// With --latency N it measures event delivery instead: after the sync it
// prints "ready" and waits for N updates (which the benchmark makes), each
// carrying its send time in the annotation bench.kube-codegen.dev/sent
// (Unix nanoseconds); its update handler takes the time of arrival, and the
// program prints the delays of all but the first tenth (the watch warming
// up) as
//
//	<p50 µs> <p99 µs> <max µs>
//
// Usage:
//
//	informer-sync --kubeconfig PATH --namespace NS --expect N
//	    [--list default|paged] [--strip-managed-fields] [--handler]
//	    [--latency N]
//
// --list default leaves client-go's WatchListClient feature gate as it is
// (on by default since client-go 0.35: the initial list is one watch with
// sendInitialEvents); --list paged turns it off the way a user does, with
// KUBE_FEATURE_WatchListClient=false, so that the reflector lists page by
// page before it watches.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"

	benchv1 "kube-codegen.invalid/tests/go/informer-sync/apis/bench/v1"
	"kube-codegen.invalid/tests/go/informer-sync/generated/clientset/versioned"
	"kube-codegen.invalid/tests/go/informer-sync/generated/informers/externalversions"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "informer-sync:", err)
		os.Exit(1)
	}
}

func run() error {
	kubeconfig := flag.String("kubeconfig", "", "path to a kubeconfig")
	namespace := flag.String("namespace", "", "the namespace of the Widgets")
	expect := flag.Int("expect", 0, "how many Widgets the synced cache must hold")
	list := flag.String("list", "default", "initial list: default (client-go's WatchListClient default) or paged")
	strip := flag.Bool("strip-managed-fields", false, "drop metadata.managedFields with SetTransform before caching")
	handler := flag.Bool("handler", false, "register one event handler and wait until it has seen every add")
	latency := flag.Int("latency", 0, "after the sync, print ready and time this many updates from watch to handler")
	flag.Parse()

	switch *list {
	case "default":
		if _, set := os.LookupEnv("KUBE_FEATURE_WatchListClient"); set {
			return fmt.Errorf("--list default with KUBE_FEATURE_WatchListClient set")
		}
	case "paged":
		// Read once, on the feature gates' first use, which is below.
		os.Setenv("KUBE_FEATURE_WatchListClient", "false")
	default:
		return fmt.Errorf("--list %q: want default or paged", *list)
	}
	streaming := clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient)
	if streaming != (*list == "default") {
		return fmt.Errorf("--list %s, but the WatchListClient feature gate is %v", *list, streaming)
	}

	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return err
	}
	// kube-rs has no client-side rate limit; client-go's default (5 QPS,
	// burst 10) would throttle a list of more than 10 pages.
	config.QPS, config.Burst = 10000, 10000
	requests := &requestLog{}
	config.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &recordingTransport{rt, requests} })
	client, err := versioned.NewForConfig(config)
	if err != nil {
		return err
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := time.Now()
	options := []externalversions.SharedInformerOption{externalversions.WithNamespace(*namespace)}
	if *strip {
		options = append(options, externalversions.WithTransform(stripManagedFields))
	}
	factory := externalversions.NewSharedInformerFactoryWithOptions(client, 0, options...)
	informer := factory.Bench().V1().Widgets().Informer()
	seenAll := make(chan struct{})
	if *handler {
		seen := 0
		if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: func(obj any) {
				if _, ok := obj.(*benchv1.Widget); ok {
					seen++
					if seen == *expect {
						close(seenAll)
					}
				}
			},
		}); err != nil {
			return err
		}
	}
	var delays chan []time.Duration
	if *latency > 0 {
		delays = make(chan []time.Duration, 1)
		var seen []time.Duration
		if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
			UpdateFunc: func(_, obj any) {
				arrived := time.Now()
				w, ok := obj.(*benchv1.Widget)
				if !ok || len(seen) == *latency {
					return
				}
				sent, err := strconv.ParseInt(w.Annotations[sentAnnotation], 10, 64)
				if err != nil {
					return
				}
				seen = append(seen, arrived.Sub(time.Unix(0, sent)))
				if len(seen) == *latency {
					delays <- seen
				}
			},
		}); err != nil {
			return err
		}
	}
	factory.Start(ctx.Done())
	for typ, synced := range factory.WaitForCacheSync(ctx.Done()) {
		if !synced {
			return fmt.Errorf("%v did not sync", typ)
		}
	}
	if *latency > 0 {
		fmt.Println("ready")
		var seen []time.Duration
		select {
		case seen = <-delays:
		case <-time.After(2 * time.Minute):
			return fmt.Errorf("updates did not arrive within 2 minutes")
		}
		cancel()
		factory.Shutdown()
		p50, p99, top := percentiles(seen[len(seen)/10:])
		fmt.Printf("%.1f %.1f %.1f\n", p50, p99, top)
		return nil
	}
	if *handler {
		<-seenAll
	}
	n := len(informer.GetIndexer().ListKeys())
	elapsed := time.Since(started)
	cancel()
	factory.Shutdown()
	if n != *expect {
		return fmt.Errorf("cached %d Widgets, expected %d", n, *expect)
	}
	if err := requests.check(streaming); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "client-go %s, WatchListClient=%v: %s\n", *list, streaming, requests.summary())

	hwm, err := peakRSS()
	if err != nil {
		return err
	}
	fmt.Printf("%v %d\n", elapsed.Seconds(), hwm)
	return nil
}

// sentAnnotation holds the time the benchmark sent an update, in Unix
// nanoseconds.
const sentAnnotation = "bench.kube-codegen.dev/sent"

// percentiles are the median, the 99th percentile (nearest rank) and the
// largest of delays, in microseconds.
func percentiles(delays []time.Duration) (p50, p99, top float64) {
	slices.Sort(delays)
	at := func(q float64) float64 {
		rank := int(q*float64(len(delays)) + 0.999999)
		return float64(delays[min(max(rank, 1), len(delays))-1].Nanoseconds()) / 1000
	}
	return at(0.5), at(0.99), float64(delays[len(delays)-1].Nanoseconds()) / 1000
}

// stripManagedFields is the transform client-go's documentation of
// SetTransform suggests for caches that never read managedFields.
func stripManagedFields(obj any) (any, error) {
	if accessor, err := meta.Accessor(obj); err == nil {
		accessor.SetManagedFields(nil)
	}
	return obj, nil
}

// peakRSS is VmHWM of /proc/self/status in KiB, as the Rust children read it.
func peakRSS() (int64, error) {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kib int64
			_, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kib)
			return kib, err
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/self/status")
}

// requestLog records the list and watch requests, to check that the
// reflector used the list mode the benchmark asked for.
type requestLog struct {
	mu      sync.Mutex
	lists   []string
	watches []string
}

type recordingTransport struct {
	next http.RoundTripper
	log  *requestLog
}

func (t *recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method == http.MethodGet && strings.HasSuffix(req.URL.Path, "/widgets") {
		q := req.URL.Query()
		t.log.mu.Lock()
		if q.Get("watch") == "true" {
			t.log.watches = append(t.log.watches, req.URL.RawQuery)
		} else {
			t.log.lists = append(t.log.lists, req.URL.RawQuery)
		}
		t.log.mu.Unlock()
	}
	return t.next.RoundTrip(req)
}

func (l *requestLog) check(streaming bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	initial := false
	for _, w := range l.watches {
		initial = initial || strings.Contains(w, "sendInitialEvents=true")
	}
	// A paged sync can finish before the reflector has opened its watch.
	if streaming && (len(l.lists) != 0 || !initial) {
		return fmt.Errorf("streaming list expected, got %s", l.summaryLocked())
	}
	if !streaming && (len(l.lists) == 0 || initial) {
		return fmt.Errorf("paged list expected, got %s", l.summaryLocked())
	}
	return nil
}

func (l *requestLog) summary() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.summaryLocked()
}

func (l *requestLog) summaryLocked() string {
	return fmt.Sprintf("%d list request(s) %q, %d watch request(s) %q", len(l.lists), l.lists, len(l.watches), l.watches)
}
