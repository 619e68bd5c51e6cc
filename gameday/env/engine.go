package env

import "context"

// Engine is what gameday needs of a container engine to act on containers
// it did not start: the containers a system file names as its dependencies'
// processes, and the containers a killed runner left stopped or frozen,
// which the fault journal's cleanup brings back. Package gameday/env/docker
// is Docker's. A program that does not link it drills without one, and a
// drill or cleanup that needs one is refused, saying so.
type Engine interface {
	// Container finds a container by name or id.
	Container(ctx context.Context, name string) (Container, error)
}

// Container is a container that process faults act on.
type Container interface {
	// ID is the engine's id of the container, for the fault journal.
	ID() string
	// Kill sends SIGKILL and waits until the container has stopped.
	Kill() error
	// Start starts it unless it runs, and waits until it runs; it does not
	// wait for what runs in it to answer.
	Start(ctx context.Context) error
	// Pause freezes it; Resume thaws it.
	Pause() error
	Resume() error
	// Close releases the connection to the engine.
	Close() error
}

// ErrNoEngine is returned where a container must be acted on and no
// container engine was given.
var ErrNoEngine = errNoEngine{}

type errNoEngine struct{}

func (errNoEngine) Error() string {
	return "no container engine: this program was built without one (the gameday command links Docker's, package gameday/env/docker)"
}
