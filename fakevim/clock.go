package fakevim

import (
	"sync"
	"time"
)

// SpeedClock maps wall time to model time: the model starts at Start when
// the clock is created and runs Speed times faster than the wall clock
// (Speed 60: one model minute per real second).
type SpeedClock struct {
	mu        sync.Mutex
	wall      func() time.Time
	wallStart time.Time
	start     time.Time
	speed     float64
}

// NewSpeedClock starts a clock at model time start running speed× wall.
// wall defaults to time.Now.
func NewSpeedClock(start time.Time, speed float64, wall func() time.Time) *SpeedClock {
	if wall == nil {
		wall = time.Now
	}
	if speed <= 0 {
		speed = 1
	}
	return &SpeedClock{wall: wall, wallStart: wall(), start: start, speed: speed}
}

// Now is the current model time.
func (c *SpeedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.start.Add(time.Duration(float64(c.wall().Sub(c.wallStart)) * c.speed))
}

// Skip moves model time forward by d at once (an admin convenience to
// skip a long step).
func (c *SpeedClock) Skip(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.start = c.start.Add(d)
}
