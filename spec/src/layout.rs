//! Bit-field layouts: one description of a header or a queue entry, from which offsets,
//! lengths, accessors, HDL slices and docs tables are all derived.
//!
//! Two byte orders exist in ferroce and each layout names its own:
//! - [`Order::Network`]: wire headers (Ethernet, IP, UDP, IBA transport headers, PCIe TLP
//!   headers). Bit 0 is the most significant bit of byte 0, as the standards draw them.
//! - [`Order::Host`]: structures in host memory and register images (WQE, CQE, contexts),
//!   little-endian. Bit 0 is the least significant bit of byte 0, so a structure read as one
//!   wide little-endian integer has field `f` at bits `f.bit .. f.bit + f.width`.

/// Byte and bit order of a layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    Network,
    Host,
}

/// One field of a layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    pub name: &'static str,
    /// Offset in bits from the start of the structure, in the layout's order.
    pub bit: usize,
    /// Width in bits (at most 128).
    pub width: usize,
    pub doc: &'static str,
}

impl Field {
    /// Byte holding the field's first bit.
    pub const fn byte(&self) -> usize {
        self.bit / 8
    }
    /// Bytes the field spans when it is byte-aligned (panics at compile time otherwise).
    pub const fn bytes(&self) -> usize {
        assert!(
            self.bit.is_multiple_of(8) && self.width.is_multiple_of(8),
            "field is not byte aligned"
        );
        self.width / 8
    }
    /// Mask of the field's width.
    pub const fn mask(&self) -> u128 {
        if self.width >= 128 {
            u128::MAX
        } else {
            (1u128 << self.width) - 1
        }
    }
}

/// Shorthand for table entries.
pub const fn f(name: &'static str, bit: usize, width: usize, doc: &'static str) -> Field {
    Field {
        name,
        bit,
        width,
        doc,
    }
}

/// A header or queue-entry layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub name: &'static str,
    pub order: Order,
    /// Length in bytes.
    pub len: usize,
    pub fields: &'static [Field],
    pub doc: &'static str,
}

/// String equality usable in `const fn` (table look-ups by name fail the build when wrong).
pub const fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

impl Layout {
    /// A wire header layout.
    pub const fn net(
        name: &'static str,
        len: usize,
        fields: &'static [Field],
        doc: &'static str,
    ) -> Layout {
        Layout {
            name,
            order: Order::Network,
            len,
            fields,
            doc,
        }
    }

    /// A host-memory (little-endian) layout.
    pub const fn host(
        name: &'static str,
        len: usize,
        fields: &'static [Field],
        doc: &'static str,
    ) -> Layout {
        Layout {
            name,
            order: Order::Host,
            len,
            fields,
            doc,
        }
    }

    /// The field named `name`. In a `const` this fails the build when the name is wrong.
    pub const fn field(&self, name: &str) -> Field {
        let mut i = 0;
        while i < self.fields.len() {
            if str_eq(self.fields[i].name, name) {
                return self.fields[i];
            }
            i += 1;
        }
        panic!("no such field")
    }

    /// Position of the field's least significant bit when the whole structure is read as one
    /// integer: big-endian for network layouts (how a TLP header or a header register holds
    /// it), little-endian for host layouts. HDL slices use this.
    pub const fn lsb(&self, field: &Field) -> usize {
        match self.order {
            Order::Network => self.len * 8 - field.bit - field.width,
            Order::Host => field.bit,
        }
    }

    /// Look a field up at run time.
    pub fn find(&self, name: &str) -> Option<&'static Field> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// Length in bits.
    pub const fn bits(&self) -> usize {
        self.len * 8
    }

    /// Read a field from `buf` (which holds at least `len` bytes).
    pub fn get(&self, field: &Field, buf: &[u8]) -> u128 {
        let mut v = 0u128;
        for i in 0..field.width {
            if buf[self.byte_of(field.bit + i)] >> self.shift_of(field.bit + i) & 1 == 1 {
                v |= self.weight(field, i);
            }
        }
        v
    }

    /// Write a field into `buf`; bits of `value` beyond the field's width are ignored.
    pub fn set(&self, field: &Field, buf: &mut [u8], value: u128) {
        for i in 0..field.width {
            let (byte, shift) = (self.byte_of(field.bit + i), self.shift_of(field.bit + i));
            buf[byte] &= !(1 << shift);
            if value & self.weight(field, i) != 0 {
                buf[byte] |= 1 << shift;
            }
        }
    }

    /// Bit `i` of a field, counted in the layout's order, has this weight in the field value:
    /// network fields start with their most significant bit, host fields with their least.
    fn weight(&self, field: &Field, i: usize) -> u128 {
        match self.order {
            Order::Network => 1u128 << (field.width - 1 - i),
            Order::Host => 1u128 << i,
        }
    }

    fn byte_of(&self, bit: usize) -> usize {
        bit / 8
    }

    fn shift_of(&self, bit: usize) -> usize {
        match self.order {
            Order::Network => 7 - bit % 8,
            Order::Host => bit % 8,
        }
    }

    /// Fields must not overlap, must fit, and network layouts must tile the header exactly.
    pub fn check(&self) -> Result<(), String> {
        let mut used = vec![false; self.bits()];
        for f in self.fields {
            if f.width == 0 || f.width > 128 || f.bit + f.width > self.bits() {
                return Err(format!("{}.{} does not fit", self.name, f.name));
            }
            if used[f.bit..f.bit + f.width].iter().any(|u| *u) {
                return Err(format!("{}.{} overlaps another field", self.name, f.name));
            }
            used[f.bit..f.bit + f.width].fill(true);
        }
        if self.order == Order::Network && used.iter().any(|u| !u) {
            return Err(format!("{} has bits no field covers", self.name));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NET: Layout = Layout {
        name: "net",
        order: Order::Network,
        len: 4,
        fields: &[f("a", 0, 4, ""), f("b", 4, 12, ""), f("c", 16, 16, "")],
        doc: "",
    };
    const HOST: Layout = Layout {
        name: "host",
        order: Order::Host,
        len: 8,
        fields: &[f("lo", 0, 3, ""), f("mid", 3, 29, ""), f("hi", 32, 32, "")],
        doc: "",
    };

    #[test]
    fn network_fields_are_msb_first() {
        let buf = [0x12, 0x34, 0x56, 0x78];
        assert_eq!(NET.get(&NET.field("a"), &buf), 0x1);
        assert_eq!(NET.get(&NET.field("b"), &buf), 0x234);
        assert_eq!(NET.get(&NET.field("c"), &buf), 0x5678);
        let mut out = [0u8; 4];
        for (name, v) in [("a", 1), ("b", 0x234), ("c", 0x5678)] {
            NET.set(&NET.field(name), &mut out, v);
        }
        assert_eq!(out, buf);
        NET.check().unwrap();
    }

    #[test]
    fn host_fields_are_little_endian() {
        let word: u64 = 0xDEAD_BEEF_1234_5678;
        let buf = word.to_le_bytes();
        assert_eq!(HOST.get(&HOST.field("lo"), &buf), (word & 7) as u128);
        assert_eq!(
            HOST.get(&HOST.field("mid"), &buf),
            (word >> 3 & 0x1FFF_FFFF) as u128
        );
        assert_eq!(HOST.get(&HOST.field("hi"), &buf), 0xDEAD_BEEF);
        let mut out = [0u8; 8];
        HOST.set(&HOST.field("hi"), &mut out, 0x1_DEAD_BEEF);
        assert_eq!(u64::from_le_bytes(out), 0xDEAD_BEEF_0000_0000);
        HOST.check().unwrap();
    }
}
