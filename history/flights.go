package history

// flights holds each client's operation in flight while a history loads:
// every call and return line looks its client up, so clients numbered
// from 0 (as a recorder numbers them) are a slice index, not a map
// lookup; any other number goes to a map.
type flights struct {
	low   []lowFlight
	other map[int]flight
}

type lowFlight struct {
	flight
	busy bool
}

// maxLowClient bounds the clients kept in the slice: a client numbered
// past it (a hand-written history) costs a map entry, not a slice that
// long.
const maxLowClient = 1 << 12

func (fs *flights) get(client int) (flight, bool) {
	if client >= 0 && client < maxLowClient {
		if client < len(fs.low) {
			return fs.low[client].flight, fs.low[client].busy
		}
		return flight{}, false
	}
	f, ok := fs.other[client]
	return f, ok
}

func (fs *flights) set(client int, f flight) {
	if client >= 0 && client < maxLowClient {
		if n := client + 1 - len(fs.low); n > 0 {
			fs.low = append(fs.low, make([]lowFlight, n)...)
		}
		fs.low[client] = lowFlight{flight: f, busy: true}
		return
	}
	if fs.other == nil {
		fs.other = map[int]flight{}
	}
	fs.other[client] = f
}

func (fs *flights) end(client int) {
	if client >= 0 && client < len(fs.low) {
		fs.low[client] = lowFlight{}
		return
	}
	delete(fs.other, client)
}
