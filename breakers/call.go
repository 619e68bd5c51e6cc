package breakers

import (
	"context"
	"sync"
)

// Call is Do for a function that returns a value. Do may return before fn
// does (when the deadline passes and fn ignores its context), so a value
// written by fn into a variable of the caller would race with the caller
// reading it; Call hands the value over only if fn finished in time.
func Call[T any](ctx context.Context, g *Guard, fn func(ctx context.Context) (T, error)) (T, error) {
	var (
		mu     sync.Mutex
		result T
		closed bool
	)
	err := g.Do(ctx, func(ctx context.Context) error {
		v, err := fn(ctx)
		mu.Lock()
		if !closed {
			result = v
		}
		mu.Unlock()
		return err
	})
	mu.Lock()
	closed = true
	v := result
	mu.Unlock()
	if err != nil {
		var zero T
		return zero, err
	}
	return v, nil
}
