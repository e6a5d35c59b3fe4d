// Command student-controller is the Go twin of examples/student-controller
// for the throughput benchmark (examples/student-controller/benches/
// throughput.rs): a client-go controller doing the same work per Student —
// the cleanup finalizer, the owned ConfigMap, the Ready status and a Synced
// event — with a dynamic informer, a ConfigMap informer and a rate-limited
// work queue, as client-go's sample-controller.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/workqueue"
)

const finalizer = "example.k8s.io/student-cleanup"

var students = schema.GroupVersionResource{Group: "example.k8s.io", Version: "v1", Resource: "students"}

type controller struct {
	dyn    dynamic.Interface
	kube   kubernetes.Interface
	lister cache.GenericLister
	cms    cache.Indexer
	queue  workqueue.TypedRateLimitingInterface[string]
	ns     string
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "path to a kubeconfig")
	namespace := flag.String("namespace", "", "the namespace to reconcile")
	workers := flag.Int("workers", 2, "workers")
	flag.Parse()
	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// kube-rs has no client-side rate limit; client-go's default (5 QPS)
	// would measure the limiter, not the controller.
	config.QPS, config.Burst = 10000, 10000
	dyn := dynamic.NewForConfigOrDie(config)
	kube := kubernetes.NewForConfigOrDie(config)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	dynFactory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, *namespace, nil)
	studentInformer := dynFactory.ForResource(students)
	cmFactory := informers.NewSharedInformerFactoryWithOptions(kube, 0, informers.WithNamespace(*namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.LabelSelector = "app.kubernetes.io/managed-by=student-controller"
		}))
	cmInformer := cmFactory.Core().V1().ConfigMaps().Informer()
	c := &controller{
		dyn: dyn, kube: kube, lister: studentInformer.Lister(), cms: cmInformer.GetIndexer(), ns: *namespace,
		queue: workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]()),
	}
	enqueue := func(obj interface{}) {
		if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
			c.queue.Add(key)
		}
	}
	studentInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj interface{}) { enqueue(obj) },
		DeleteFunc: enqueue,
	})
	dynFactory.Start(ctx.Done())
	cmFactory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), studentInformer.Informer().HasSynced, cmInformer.HasSynced) {
		fmt.Fprintln(os.Stderr, "caches did not sync")
		os.Exit(1)
	}
	for i := 0; i < *workers; i++ {
		go wait.UntilWithContext(ctx, c.runWorker, time.Second)
	}
	<-ctx.Done()
	c.queue.ShutDown()
}

func (c *controller) runWorker(ctx context.Context) {
	for {
		key, shutdown := c.queue.Get()
		if shutdown {
			return
		}
		if err := c.sync(ctx, key); err != nil {
			c.queue.AddRateLimited(key)
		} else {
			c.queue.Forget(key)
		}
		c.queue.Done(key)
	}
}

func (c *controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	obj, err := c.lister.ByNamespace(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	} else if err != nil {
		return err
	}
	student := obj.(*unstructured.Unstructured).DeepCopy()
	if student.GetDeletionTimestamp() != nil {
		return nil
	}
	api := c.dyn.Resource(students).Namespace(ns)
	changed := false
	has := false
	for _, f := range student.GetFinalizers() {
		has = has || f == finalizer
	}
	if !has {
		patch := fmt.Sprintf(`{"metadata":{"finalizers":[%s],"resourceVersion":%q}}`, quoteAll(append(student.GetFinalizers(), finalizer)), student.GetResourceVersion())
		student, err = api.Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
		if err != nil {
			return err
		}
		changed = true
	}
	school, _, _ := unstructured.NestedString(student.Object, "spec", "school")
	studentName, _, _ := unstructured.NestedString(student.Object, "spec", "name")
	cmName := "student-" + name
	if _, exists, _ := c.cms.GetByKey(ns + "/" + cmName); !exists {
		controllerRef := true
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{
				Name: cmName, Namespace: ns,
				Labels: map[string]string{"app.kubernetes.io/managed-by": "student-controller"},
				OwnerReferences: []metav1.OwnerReference{{
					APIVersion: "example.k8s.io/v1", Kind: "Student", Name: name, UID: student.GetUID(),
					Controller: &controllerRef, BlockOwnerDeletion: &controllerRef,
				}},
			},
			Data: map[string]string{"name": studentName, "school": school},
		}
		if _, err := c.kube.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			return err
		}
		changed = true
	}
	generation := student.GetGeneration()
	observed, _, _ := unstructured.NestedInt64(student.Object, "status", "observedGeneration")
	if observed != generation {
		status := map[string]interface{}{
			"observedGeneration": generation,
			"conditions": []interface{}{map[string]interface{}{
				"type": "Ready", "status": "True", "reason": "Synced", "message": "Student synced successfully",
				"lastTransitionTime": time.Now().UTC().Format(time.RFC3339),
			}},
		}
		if err := unstructured.SetNestedField(student.Object, status, "status"); err != nil {
			return err
		}
		if _, err := api.UpdateStatus(ctx, student, metav1.UpdateOptions{}); err != nil {
			return err
		}
		changed = true
	}
	if changed {
		now := metav1.NowMicro()
		event := &eventsv1.Event{
			ObjectMeta:          metav1.ObjectMeta{GenerateName: name + ".", Namespace: ns},
			EventTime:           now,
			ReportingController: "student-controller",
			ReportingInstance:   "student-controller-go",
			Action:              "Synced",
			Reason:              "Synced",
			Type:                corev1.EventTypeNormal,
			Note:                "Student synced successfully",
			Regarding: corev1.ObjectReference{
				APIVersion: "example.k8s.io/v1", Kind: "Student", Namespace: ns, Name: name, UID: student.GetUID(),
			},
		}
		_, _ = c.kube.EventsV1().Events(ns).Create(ctx, event, metav1.CreateOptions{})
	}
	return nil
}

func quoteAll(items []string) string {
	out := ""
	for i, s := range items {
		if i > 0 {
			out += ","
		}
		out += fmt.Sprintf("%q", s)
	}
	return out
}
