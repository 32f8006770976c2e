//! Collections of nested structs, and structs checked after they are read:
//! generic over the element's [`Nested`] type, so the driver reads a
//! snapshot's lists and maps without naming what they hold.

use super::{Field, Nested, Record, Seed, Shape, Slot};
use crate::wire::ids::JobId;
use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use std::collections::BTreeMap;
use std::fmt;

/// A `Vec` of structs being read: the builder of the next element, and
/// where built ones go.
pub(crate) trait Elements {
    /// The sequence has started: an empty list.
    fn start(&mut self);
    /// The builder of the next element.
    fn element(&mut self) -> &mut dyn Record;
    /// The element just read goes to the end of the list.
    fn push(&mut self);
}

/// The [`Field`] store of a `Vec<T>`: one builder, reused for every
/// element.
pub(crate) struct SeqOf<T: Nested> {
    items: Option<Vec<T>>,
    next: T::Builder,
}

impl<T: Nested> Default for SeqOf<T> {
    fn default() -> Self {
        SeqOf {
            items: None,
            next: T::Builder::default(),
        }
    }
}

impl<T: Nested> Elements for SeqOf<T> {
    fn start(&mut self) {
        self.items = Some(Vec::new());
    }

    fn element(&mut self) -> &mut dyn Record {
        &mut self.next
    }

    fn push(&mut self) {
        // Both are there: `start` began the list and an element was read.
        if let (Some(items), Some(item)) = (&mut self.items, T::built(&mut self.next)) {
            items.push(item);
        }
    }
}

impl<T: Nested> Field for Vec<T> {
    type Store = SeqOf<T>;

    fn slot(store: &mut SeqOf<T>) -> Slot<'_> {
        Slot::Seq(store)
    }

    fn take(store: &mut SeqOf<T>) -> Option<Vec<T>> {
        store.items.take()
    }
}

/// serde's `Vec` visitor, for nested structs.
pub(super) struct SeqVisitor<'a>(pub(super) &'a mut dyn Elements);

impl<'de> Visitor<'de> for SeqVisitor<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a sequence")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        self.0.start();
        while seq
            .next_element_seed(Seed(Slot::Rec(self.0.element())))?
            .is_some()
        {
            self.0.push();
        }
        Ok(())
    }
}

/// A `BTreeMap` of structs being read: the slot of the next key, the
/// builder of the next value, and where built entries go.
pub(crate) trait Entries {
    /// The map has started: an empty map.
    fn start(&mut self);
    /// Where the next key goes.
    fn key(&mut self) -> KeySlot<'_>;
    /// The builder of the next value.
    fn value(&mut self) -> &mut dyn Record;
    /// The entry just read goes in the map (replacing an equal key's).
    fn insert(&mut self);
}

/// Where a map's key goes: the key types of the snapshot's maps. Apart
/// from [`Slot`], so that keys (read through serde_json's `MapKey`) do not
/// instantiate the whole of [`Seed`] a second time.
pub(crate) enum KeySlot<'a> {
    Str(&'a mut Option<String>),
    JobId(&'a mut Option<JobId>),
}

/// A type that keys a map of structs.
pub(crate) trait MapKey: Ord + Sized {
    /// Where the key goes.
    fn slot(store: &mut Option<Self>) -> KeySlot<'_>;
}

impl MapKey for String {
    fn slot(store: &mut Option<String>) -> KeySlot<'_> {
        KeySlot::Str(store)
    }
}

impl MapKey for JobId {
    fn slot(store: &mut Option<JobId>) -> KeySlot<'_> {
        KeySlot::JobId(store)
    }
}

/// Reads a key into its slot, with the key type's `Deserialize`.
struct KeySeed<'a>(KeySlot<'a>);

impl<'de> DeserializeSeed<'de> for KeySeed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        match self.0 {
            KeySlot::Str(o) => *o = Some(Deserialize::deserialize(d)?),
            KeySlot::JobId(o) => *o = Some(Deserialize::deserialize(d)?),
        }
        Ok(())
    }
}

/// The [`Field`] store of a `BTreeMap<K, T>`: one key and one builder,
/// reused for every entry.
pub(crate) struct MapOf<K: MapKey, T: Nested> {
    items: Option<BTreeMap<K, T>>,
    key: Option<K>,
    value: T::Builder,
}

impl<K: MapKey, T: Nested> Default for MapOf<K, T> {
    fn default() -> Self {
        MapOf {
            items: None,
            key: None,
            value: T::Builder::default(),
        }
    }
}

impl<K: MapKey, T: Nested> Entries for MapOf<K, T> {
    fn start(&mut self) {
        self.items = Some(BTreeMap::new());
    }

    fn key(&mut self) -> KeySlot<'_> {
        K::slot(&mut self.key)
    }

    fn value(&mut self) -> &mut dyn Record {
        &mut self.value
    }

    fn insert(&mut self) {
        // All are there: `start` began the map, a key and a value were read.
        let key = self.key.take();
        if let (Some(items), Some(key), Some(value)) =
            (&mut self.items, key, T::built(&mut self.value))
        {
            items.insert(key, value);
        }
    }
}

impl<K: MapKey, T: Nested> Field for BTreeMap<K, T> {
    type Store = MapOf<K, T>;

    fn slot(store: &mut MapOf<K, T>) -> Slot<'_> {
        Slot::Map(store)
    }

    fn take(store: &mut MapOf<K, T>) -> Option<BTreeMap<K, T>> {
        store.items.take()
    }
}

/// serde's `BTreeMap` visitor (key, then value, then insert), for nested
/// structs.
pub(super) struct MapVisitor<'a>(pub(super) &'a mut dyn Entries);

impl<'de> Visitor<'de> for MapVisitor<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a map")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        self.0.start();
        while map.next_key_seed(KeySeed(self.0.key()))?.is_some() {
            map.next_value_seed(Seed(Slot::Rec(self.0.value())))?;
            self.0.insert();
        }
        Ok(())
    }
}

/// A type whose `Deserialize` reads its serialized parts (a derived
/// struct) and then rebuilds and checks the rest, failing with a custom
/// error after the struct (as `Queues` and `Leases` do).
pub(crate) trait Restore: Sized {
    /// The serialized fields.
    type Parts: Nested;
    /// The value from its parts, or why they are incoherent.
    fn restore(parts: Self::Parts) -> Result<Self, String>;
}

/// The [`Field`] store of a [`Restore`] type: reads the parts, restores in
/// [`Record::check`] (see [`Slot::Checked`]).
pub(crate) struct Restoring<T: Restore> {
    parts: <T::Parts as Nested>::Builder,
    out: Option<T>,
}

impl<T: Restore> Restoring<T> {
    /// The value restored, once.
    pub(crate) fn take(&mut self) -> Option<T> {
        self.out.take()
    }
}

impl<T: Restore> Default for Restoring<T> {
    fn default() -> Self {
        Restoring {
            parts: Default::default(),
            out: None,
        }
    }
}

impl<T: Restore> Record for Restoring<T> {
    fn shape(&self) -> &'static Shape {
        self.parts.shape()
    }

    fn slot(&mut self, i: usize) -> Slot<'_> {
        self.parts.slot(i)
    }

    fn finish(&mut self) -> Result<(), super::Problem> {
        self.parts.finish()
    }

    fn check(&mut self) -> Result<(), String> {
        // The parts are there: `finish` built them.
        if let Some(parts) = T::Parts::built(&mut self.parts) {
            self.out = Some(T::restore(parts)?);
        }
        Ok(())
    }
}
