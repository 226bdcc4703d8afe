// Copyright 2021 FerretDB Inc.
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

package sjson

import (
	"bytes"
	"encoding/json"

	"github.com/FerretDB/FerretDB/internal/util/lazyerrors"
)

// int32Type represents BSON 32-bit integer type.
type int32Type int32

// sjsontype implements sjsontype interface.
func (i *int32Type) sjsontype() {}

// UnmarshalJSON implements json.Unmarshaler interface.
func (i *int32Type) UnmarshalJSON(data []byte) error {
	if bytes.Equal(data, []byte("null")) {
		panic("null data")
	}

	// Patched for the embedded database: json.Unmarshal, which also refuses trailing data,
	// instead of a Decoder per value (most of a document read's CPU).
	var o int32
	if err := json.Unmarshal(data, &o); err != nil {
		return lazyerrors.Error(err)
	}

	*i = int32Type(o)

	return nil
}

// MarshalJSON implements sjsontype interface.
func (i *int32Type) MarshalJSON() ([]byte, error) {
	res, err := json.Marshal(int32(*i))
	if err != nil {
		return nil, lazyerrors.Error(err)
	}

	return res, nil
}

// check interfaces
var (
	_ sjsontype = (*int32Type)(nil)
)
