package deployment

import (
	"fmt"
	"strings"
)

// KeySlot is the Redis Cluster hash slot of key: CRC16 (XMODEM) of its
// hash tag (the part between the first "{" and the next "}", when not
// empty) or of the whole key, modulo 16384, as the cluster specification
// computes it.
func KeySlot(key string) int {
	if open := strings.IndexByte(key, '{'); open >= 0 {
		if end := strings.IndexByte(key[open+1:], '}'); end > 0 {
			key = key[open+1 : open+1+end]
		}
	}
	var crc uint16
	for i := 0; i < len(key); i++ {
		crc ^= uint16(key[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return int(crc) % ClusterSlots
}

// shardRange is the slots shard s of shards is given at the start: an
// even split, as redis-cli --cluster create makes it.
func shardRange(s, shards int) (lo, hi int) {
	return s * ClusterSlots / shards, (s+1)*ClusterSlots/shards - 1
}

// keyInSlots returns a key whose slot lies in lo..hi, made from base and a
// hash tag, for writes that must land on one shard.
func keyInSlots(base string, lo, hi int) string {
	for n := 0; ; n++ {
		k := fmt.Sprintf("%s{%d}", base, n)
		if s := KeySlot(k); s >= lo && s <= hi {
			return k
		}
	}
}
