package stream

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

func ev(topic Topic, key, ns string, filter ...string) *Event {
	return &Event{Topic: topic, Type: TypePlanResult, Key: key, Namespace: ns, FilterKeys: filter}
}

// next reads one batch, failing the test if none comes within a bounded
// time.
func next(t *testing.T, s *Subscription) *Batch {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	b, err := s.Next(ctx)
	if err != nil {
		t.Fatalf("Next: %v", err)
	}
	return b
}

// none checks that no batch is ready: Next on a cancelled context must
// answer the context's error, not a batch.
func none(t *testing.T, s *Subscription) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if b, err := s.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Next = %+v, %v; want nothing ready", b, err)
	}
}

func keys(b *Batch) []string {
	var out []string
	for _, e := range b.Events {
		out = append(out, string(e.Topic)+":"+e.Key)
	}
	return out
}

func TestSubscribeFiltersByTopicKeyAndNamespace(t *testing.T) {
	b := NewBuffer(10)
	b.Publish(5, []*Event{ev(TopicJob, "web", "default"), ev(TopicEvaluation, "e1", "default", "web"), ev(TopicJob, "api", "prod")})
	b.Publish(6, []*Event{ev(TopicAllocation, "a1", "default", "web", "d1"), ev(TopicNode, "n1", "")})
	b.Publish(7, []*Event{ev(TopicDeployment, "d1", "default", "web")})

	cases := []struct {
		name string
		req  SubscribeRequest
		want []string // "index: topic:key ..." per batch
	}{
		{"job web", SubscribeRequest{Topics: map[Topic][]string{TopicJob: {"web"}}, Namespace: "default"},
			[]string{"5 [Job:web]"}},
		{"everything in default", SubscribeRequest{Topics: map[Topic][]string{TopicAll: nil}, Namespace: "default"},
			[]string{"5 [Job:web Evaluation:e1]", "6 [Allocation:a1 Node:n1]", "7 [Deployment:d1]"}},
		{"every namespace", SubscribeRequest{Topics: map[Topic][]string{TopicJob: {"*"}}, Namespace: "*"},
			[]string{"5 [Job:web Job:api]"}},
		{"by filter key", SubscribeRequest{Topics: map[Topic][]string{TopicAllocation: {"d1"}, TopicDeployment: {"*"}}, Namespace: "default"},
			[]string{"6 [Allocation:a1]", "7 [Deployment:d1]"}},
		{"from index", SubscribeRequest{Topics: map[Topic][]string{TopicAll: {"*"}}, Namespace: "default", Index: 6},
			[]string{"6 [Allocation:a1 Node:n1]", "7 [Deployment:d1]"}},
		{"allow", SubscribeRequest{Topics: map[Topic][]string{TopicAll: nil}, Namespace: "*",
			Allow: func(e *Event) bool { return e.Topic != TopicNode && e.Namespace != "prod" }},
			[]string{"5 [Job:web Evaluation:e1]", "6 [Allocation:a1]", "7 [Deployment:d1]"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := b.Subscribe(c.req)
			defer s.Close()
			for _, want := range c.want {
				got := next(t, s)
				if g := fmt.Sprintf("%d %v", got.Index, keys(got)); g != want {
					t.Fatalf("got %s, want %s", g, want)
				}
			}
			none(t, s)
		})
	}
}

func TestNextWaitsForPublish(t *testing.T) {
	b := NewBuffer(4)
	s := b.Subscribe(SubscribeRequest{Topics: map[Topic][]string{TopicJob: nil}, Index: 3})
	defer s.Close()
	got := make(chan *Batch, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		batch, err := s.Next(ctx)
		if err != nil {
			t.Error(err)
		}
		got <- batch
	}()
	b.Publish(2, []*Event{ev(TopicJob, "old", "")}) // before Index: skipped
	b.Publish(3, []*Event{ev(TopicJob, "web", "")})
	if batch := <-got; batch.Index != 3 {
		t.Fatalf("first batch at %d, want 3", batch.Index)
	}
	if st := b.Stats(); st.Published != 2 || st.Entries != 2 || st.LastIndex != 3 || st.Subscribers != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// A subscriber that never reads costs the publisher nothing: publishing
// far more entries than the ring holds finishes, and the subscriber is
// then told it fell behind (and stays told), while a new subscription
// reads the latest entries.
func TestSlowSubscriberDroppedNeverBlocks(t *testing.T) {
	b := NewBuffer(8)
	slow := b.Subscribe(SubscribeRequest{Topics: map[Topic][]string{TopicAll: nil}, Namespace: "*"})
	defer slow.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := uint64(1); i <= 10000; i++ {
			b.Publish(i, []*Event{ev(TopicJob, "web", "default")})
		}
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("publishing blocked on a subscriber that does not read")
	}
	for range 2 {
		if _, err := slow.Next(context.Background()); !errors.Is(err, ErrSubscriberBehind) {
			t.Fatalf("slow subscriber: %v, want ErrSubscriberBehind", err)
		}
	}
	if st := b.Stats(); st.Dropped != 1 || st.Entries != 8 {
		t.Fatalf("stats %+v", st)
	}
	fresh := b.Subscribe(SubscribeRequest{Topics: map[Topic][]string{TopicAll: nil}, Namespace: "*"})
	defer fresh.Close()
	if got := next(t, fresh); got.Index != 10000-7 {
		t.Fatalf("a new subscription starts at %d, want the oldest kept, %d", got.Index, 10000-7)
	}
	// An index older than the ring starts at the oldest kept entry.
	old := b.Subscribe(SubscribeRequest{Topics: map[Topic][]string{TopicAll: nil}, Namespace: "*", Index: 5})
	defer old.Close()
	if got := next(t, old); got.Index != 10000-7 {
		t.Fatalf("index 5 starts at %d", got.Index)
	}
}

func TestResetEndsSubscriptions(t *testing.T) {
	b := NewBuffer(4)
	b.Publish(1, []*Event{ev(TopicJob, "web", "")})
	s := b.Subscribe(SubscribeRequest{Topics: map[Topic][]string{TopicAll: nil}})
	b.Reset()
	if _, err := s.Next(context.Background()); !errors.Is(err, ErrBufferReset) {
		t.Fatalf("after reset: %v", err)
	}
	s2 := b.Subscribe(SubscribeRequest{Topics: map[Topic][]string{TopicAll: nil}})
	none(t, s2)
	b.Publish(9, []*Event{ev(TopicJob, "web", "")})
	if next(t, s2).Index != 9 {
		t.Fatal("no batch after reset")
	}
	s2.Close()
	if _, err := s2.Next(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("after close: %v", err)
	}
	if st := b.Stats(); st.Subscribers != 1 {
		t.Fatalf("subscribers %d, want 1 (s was not closed)", st.Subscribers)
	}
}

func TestEncodedOncePerEvent(t *testing.T) {
	b := NewBuffer(2)
	e := ev(TopicJob, "web", "")
	b.Publish(1, []*Event{e})
	calls := 0
	enc := func(e *Event) ([]byte, error) { calls++; return []byte(e.Key), nil }
	for range 3 {
		if got, _ := e.Encoded(enc); string(got) != "web" {
			t.Fatalf("encoded %q", got)
		}
	}
	if calls != 1 {
		t.Fatalf("encoder called %d times", calls)
	}
}
