package router

import "github.com/gameday-dev/gameday/internal/routetable"

// The routing table is package routetable's (the runner writes it too);
// these are its names as the router's users know them.
type (
	// Keys name the routing table's Redis keys.
	Keys = routetable.Keys
	// Table is one routing table as the router loaded it.
	Table = routetable.Table
)

// The table's default keys and the mark of a shop being moved.
const (
	DefaultRoutesKey = routetable.DefaultRoutesKey
	DefaultPodsKey   = routetable.DefaultPodsKey
	MovingPrefix     = routetable.MovingPrefix
)

var (
	// ErrNoTable: the store answers but holds no table.
	ErrNoTable = routetable.ErrNoTable
	// Moving is the route of a shop being moved whose reads go to pod.
	Moving = routetable.Moving
	// WriteTable replaces the table and bumps its version at once.
	WriteTable = routetable.WriteTable
	// SetRoute changes one shop's route and bumps the version at once.
	SetRoute = routetable.SetRoute
)
