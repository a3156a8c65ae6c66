//! The named configurations: every parameter a design is built with, by name, and each block
//! at those parameters as a type. `ten_g` is the 10g NIC and its blocks (64-bit datapath,
//! 156.25 MHz); `hundred_g` the 100G MAC and the taps at 512 bits (250 MHz). The design
//! registry, the tests and the docs name these types and constants; nothing else spells out a
//! parameter list.

/// A named configuration: `10g` is a 64-bit datapath, `100g` 512-bit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Config {
    TenG,
    HundredG,
}

impl Config {
    pub fn data_width(self) -> usize {
        match self {
            Config::TenG => ten_g::DW,
            Config::HundredG => hundred_g::DW,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Config::TenG => "10g",
            Config::HundredG => "100g",
        }
    }
    /// Core clock in kHz.
    pub fn clock_khz(self) -> u32 {
        (1_000_000_000 / self.clock_period_ps()) as u32
    }
    /// Core clock period in picoseconds (156.25 MHz and 250 MHz).
    pub fn clock_period_ps(self) -> u64 {
        match self {
            Config::TenG => ten_g::CLOCK_PERIOD_PS,
            Config::HundredG => hundred_g::CLOCK_PERIOD_PS,
        }
    }
}

/// The `10g` configuration: the whole NIC and every block of it.
pub mod ten_g {
    /// Datapath bits, and their byte enables.
    pub const DW: usize = 64;
    pub const KW: usize = DW / 8;
    /// Core clock period: 156.25 MHz.
    pub const CLOCK_PERIOD_PS: u64 = 6400;
    /// The ICRC and FCS taps' lane shift: log2 of `DW`.
    pub const SHIFT_W: usize = 6;
    /// The header image the TX header builder takes and the RX parser gives (bits).
    pub const HDR_W: usize = 704;
    /// The DMA read engine's buffer: two banks of 2^`DMA_BANK_A` words.
    pub const DMA_BANK_A: usize = 9;
    /// The NIC's transmit queues: 2^`TXQ_QB` of them (four: the eight priorities in pairs,
    /// `spec::mac_ctrl::queue_of`; eight would cost 36 more block RAMs on ECP5), 2^`TXQ_A`
    /// beats each (16 KiB: with 8 KiB, 64 KiB WRITEs fell to 74% of the line), `TXQ_RA`
    /// address bits for all of them.
    pub const TXQ_QB: usize = 2;
    pub const TXQ_A: usize = 11;
    pub const TXQ_RA: usize = TXQ_A + TXQ_QB;
    /// The NIC's receive buffer: 2^`RXB_A` beats (32 KiB).
    pub const RXB_A: usize = 12;
    /// The lone MAC blocks' smaller memories (the same logic; quicker to synthesize): transmit
    /// queues of 2^`BLOCK_TXQ_A` beats, receive buffers of 2^`BLOCK_RXB_A` (the MAC receive
    /// block) and 2^`BLOCK_RX_A` beats (the whole receive path).
    pub const BLOCK_TXQ_A: usize = 10;
    pub const BLOCK_TXQ_RA: usize = BLOCK_TXQ_A + TXQ_QB;
    pub const BLOCK_RXB_A: usize = 11;
    pub const BLOCK_RX_A: usize = 10;
    /// The read-share block's skid: a beat with its `tuser` in one more lane.
    pub const SHARE_W: usize = DW + 8;
    pub const SHARE_K: usize = KW + 1;
    /// A clock crossing's queue of beats: a beat and its keep, 2^`CDC_A` deep (enough for
    /// the synchronizers' round trip at any clock ratio).
    pub const CDC_W: usize = DW + KW;
    pub const CDC_A: usize = 4;
    pub const CDC_P: usize = CDC_A + 1;

    pub type Crc32 = crate::crc::Crc32<DW, KW>;
    pub type Icrc = crate::crc::Icrc<DW, KW, SHIFT_W>;
    pub type AsyncFifo = crate::cdc::AsyncFifo<CDC_W, CDC_A, CDC_P>;
    /// A counter read across the clocks (the MAC's counters are 32 bits).
    pub type SyncCount = crate::cdc::SyncCount<32>;
    pub type Bar0 = crate::host::Bar0<DW, KW>;
    pub type DmaRead = crate::host::DmaRead<DW, KW, DMA_BANK_A>;
    pub type DmaWrite = crate::host::DmaWrite<DW, KW>;
    pub type RqMux = crate::host::RqMux<DW, KW>;
    pub type RdShare = crate::host::RdShare<DW, KW, SHARE_W, SHARE_K>;
    pub type TxHeader = crate::net::TxHeader<DW, KW, HDR_W>;
    pub type MacTx = crate::net::MacTx<DW, KW, BLOCK_TXQ_A, BLOCK_TXQ_RA>;
    pub type TxQueues = crate::net::TxQueues<DW, KW, BLOCK_TXQ_A, BLOCK_TXQ_RA>;
    pub type MacRx = crate::net::MacRx<DW, KW, SHIFT_W, BLOCK_RXB_A>;
    pub type MacCtrlRx = crate::net::MacCtrlRx<DW>;
    pub type RxParser = crate::net::RxParser<DW, KW, HDR_W>;
    pub type RxFrame = crate::net::RxFrame<DW, KW, SHIFT_W, BLOCK_RX_A, HDR_W>;
    pub type TxFrame = crate::net::TxFrame<DW, KW, HDR_W, SHIFT_W, BLOCK_TXQ_A, BLOCK_TXQ_RA>;
    pub type TxArb = crate::net::TxArb<DW, KW>;
    /// The NIC's MAC (the 10G MAC block wraps it with XGMII).
    pub type Mac = crate::net::Mac<DW, KW, TXQ_A, TXQ_RA, SHIFT_W, RXB_A>;
    pub type Requester = crate::rc::Requester<DW, KW>;
    pub type Responder = crate::rc::Responder<DW, KW>;
    pub type Completer = crate::rc::Completer<DW>;
    pub type RecvQueue = crate::rc::RecvQueue<DW>;
    pub type Gather = crate::stream::Gather<DW, KW>;
    pub type Scatter = crate::stream::Scatter<DW, KW>;
    /// The whole NIC (`ferroce_nic_64`; `ferroce_nic_10g` adds the XGMII face).
    pub type Nic = crate::nic::Nic<
        DW,
        KW,
        DMA_BANK_A,
        HDR_W,
        SHIFT_W,
        RXB_A,
        HDR_W,
        TXQ_A,
        TXQ_RA,
        SHARE_W,
        SHARE_K,
    >;
}

/// The `100g` configuration: the MAC for a hard 100G MAC's 512-bit face, and the taps.
pub mod hundred_g {
    /// Datapath bits, and their byte enables.
    pub const DW: usize = 512;
    pub const KW: usize = DW / 8;
    /// Core clock period: 250 MHz.
    pub const CLOCK_PERIOD_PS: u64 = 4000;
    /// The ICRC and FCS taps' lane shift: log2 of `DW`.
    pub const SHIFT_W: usize = 9;
    /// Transmit queues: eight (2^`TXQ_QB`, one per priority), 2^`TXQ_A` beats each (16 KiB: a
    /// 9,000-byte frame is 141), `TXQ_RA` address bits for all of them.
    pub const TXQ_QB: usize = 3;
    pub const TXQ_A: usize = 8;
    pub const TXQ_RA: usize = TXQ_A + TXQ_QB;
    /// The receive buffer: 2^`RXB_A` beats (64 KiB, the headroom a jumbo frame needs at
    /// 100 Gb/s).
    pub const RXB_A: usize = 10;
    /// The lone transmit queue block's smaller memory (quicker to synthesize).
    pub const BLOCK_TXQ_A: usize = 7;
    pub const BLOCK_TXQ_RA: usize = BLOCK_TXQ_A + TXQ_QB;

    pub type Crc32 = crate::crc::Crc32<DW, KW>;
    pub type Icrc = crate::crc::Icrc<DW, KW, SHIFT_W>;
    pub type TxQueues = crate::net::TxQueues<DW, KW, BLOCK_TXQ_A, BLOCK_TXQ_RA>;
    pub type MacCtrlRx = crate::net::MacCtrlRx<DW>;
    /// The 100G MAC (`ferroce_mac_512`).
    pub type Mac = crate::net::Mac<DW, KW, TXQ_A, TXQ_RA, SHIFT_W, RXB_A>;
}
