package controllers

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"

	"github.com/hcpsched/hcpsched/internal/api"
	"github.com/hcpsched/hcpsched/internal/database"
)

// foreignWritesKey is the properties key a contending writer bumps: a field hcpsched does
// not know, so its survival also proves that the winner's write was preserved.
const foreignWritesKey = "testForeignWrites"

// contendedContainer makes every write the controllers attempt lose a race, once: before
// each Replace whose previous attempt on the same document went through, another writer
// changes the document (bumping instanceVersion, so the change feed carries it), and the
// Replace gets a real 412; before each Create another writer creates the same document,
// and the Create gets a real 409.
type contendedContainer struct {
	database.Container

	mu sync.Mutex
	// lost is true for documents whose last Replace was made to lose.
	lost map[string]bool
	// replaceConflicts and createConflicts count the lost writes per document id.
	replaceConflicts map[string]int
	createConflicts  map[string]int
}

func newContendedContainer(c database.Container) *contendedContainer {
	return &contendedContainer{Container: c, lost: map[string]bool{}, replaceConflicts: map[string]int{}, createConflicts: map[string]int{}}
}

func (c *contendedContainer) Replace(ctx context.Context, pk, id string, body []byte, ifMatch string) (database.Item, error) {
	c.mu.Lock()
	contend := !c.lost[id]
	c.lost[id] = contend
	c.mu.Unlock()
	if contend {
		if err := c.foreignReplace(ctx, pk, id); err != nil {
			return database.Item{}, err
		}
		c.mu.Lock()
		c.replaceConflicts[id]++
		c.mu.Unlock()
	}
	return c.Container.Replace(ctx, pk, id, body, ifMatch)
}

func (c *contendedContainer) Create(ctx context.Context, pk string, body []byte) (database.Item, error) {
	doc, err := api.Decode[api.RawProperties](body)
	if err != nil {
		return database.Item{}, err
	}
	doc.Properties.SetUnknown(foreignWritesKey, json.RawMessage("1"))
	doc.PrepareCreate()
	foreign, err := api.Encode(doc)
	if err != nil {
		return database.Item{}, err
	}
	if _, err := c.Container.Create(ctx, pk, foreign); err != nil {
		return database.Item{}, err
	}
	c.mu.Lock()
	c.createConflicts[doc.ID]++
	c.mu.Unlock()
	return c.Container.Create(ctx, pk, body)
}

// foreignReplace is another ARO-HCP component writing the document in between: it
// keeps every field and bumps instanceVersion, as a compatible writer does.
func (c *contendedContainer) foreignReplace(ctx context.Context, pk, id string) error {
	item, err := c.Container.Get(ctx, pk, id)
	if err != nil {
		return err
	}
	doc, err := database.DecodeItem[api.RawProperties](item)
	if err != nil {
		return err
	}
	n := 0
	if raw, ok := doc.Properties.Unknown(foreignWritesKey); ok {
		n, _ = strconv.Atoi(string(raw))
	}
	doc.Properties.SetUnknown(foreignWritesKey, json.RawMessage(strconv.Itoa(n+1)))
	doc.ETag = item.ETag
	_, err = database.Replace(ctx, c.Container, doc)
	return err
}

func (c *contendedContainer) conflicts(id string) (replace, create int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.replaceConflicts[id], c.createConflicts[id]
}
