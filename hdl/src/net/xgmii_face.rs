//! `xgmii_face!`: a block with frame faces wrapped in the XGMII encoder and decoder, every
//! other port passed through (a kernel cannot loop over ports, so the macro lists them): the
//! 10G NIC (`Nic10g`) and the 10G MAC (`Mac10g`) are made with it.

/// Wrap a block with frame faces in `XgmiiTx`/`XgmiiRx`: `$name` gets the block's ports named
/// in `ins`/`outs` (passed through), `clk`, `rst`, the XGMII words and counters; the block's
/// transmit frame output (`tx`: tdata, tkeep, tlast, tvalid, tready) feeds the encoder, the
/// decoder feeds its receive frame input (`rx`: tdata, tkeep, tlast, tvalid, tuser).
/// `$name::wrap(inner)` builds it.
macro_rules! xgmii_face {
    (
        $(#[$doc:meta])*
        $name:ident wraps $inner:ident : $ity:ty,
        tx { $td:ident, $tk:ident, $tl:ident, $tv:ident, $tr:ident }
        rx { $rd:ident, $rk:ident, $rl:ident, $rv:ident, $ru:ident }
        ins { $($i:ident : $it:ty),* $(,)? }
        outs { $($o:ident : $ot:ty),* $(,)? }
    ) => {
        $(#[$doc])*
        #[derive(LogicBlock)]
        pub struct $name {
            pub clk: Signal<In, Clock>,
            pub rst: Signal<In, Bit>,
            $(pub $i: Signal<In, $it>,)*
            $(pub $o: Signal<Out, $ot>,)*
            pub xgmii_txd: Signal<Out, Bits<64>>,
            pub xgmii_txc: Signal<Out, Bits<8>>,
            pub xgmii_rxd: Signal<In, Bits<64>>,
            pub xgmii_rxc: Signal<In, Bits<8>>,
            pub xgmii_tx_frames: Signal<Out, Bits<32>>,
            pub xgmii_tx_underrun: Signal<Out, Bits<32>>,
            pub xgmii_rx_frames: Signal<Out, Bits<32>>,
            pub xgmii_rx_code_err: Signal<Out, Bits<32>>,
            $inner: $ity,
            xtx: XgmiiTx,
            xrx: XgmiiRx,
        }

        impl $name {
            pub fn wrap($inner: $ity) -> Self {
                Self {
                    clk: Default::default(),
                    rst: Default::default(),
                    $($i: Default::default(),)*
                    $($o: Default::default(),)*
                    xgmii_txd: Default::default(),
                    xgmii_txc: Default::default(),
                    xgmii_rxd: Default::default(),
                    xgmii_rxc: Default::default(),
                    xgmii_tx_frames: Default::default(),
                    xgmii_tx_underrun: Default::default(),
                    xgmii_rx_frames: Default::default(),
                    xgmii_rx_code_err: Default::default(),
                    $inner,
                    xtx: XgmiiTx::new(),
                    xrx: XgmiiRx::new(),
                }
            }
        }

        impl Logic for $name {
            #[hdl_gen]
            fn update(&mut self) {
                self.$inner.clk.next = self.clk.val();
                self.$inner.rst.next = self.rst.val();
                self.xtx.clk.next = self.clk.val();
                self.xtx.rst.next = self.rst.val();
                self.xrx.clk.next = self.clk.val();
                self.xrx.rst.next = self.rst.val();
                $(self.$inner.$i.next = self.$i.val();)*
                $(self.$o.next = self.$inner.$o.val();)*
                // Transmit: the block's frames (FCS included) to the XGMII encoder.
                self.xtx.s_axis_tdata.next = self.$inner.$td.val();
                self.xtx.s_axis_tkeep.next = self.$inner.$tk.val();
                self.xtx.s_axis_tlast.next = self.$inner.$tl.val();
                self.xtx.s_axis_tvalid.next = self.$inner.$tv.val();
                self.$inner.$tr.next = self.xtx.s_axis_tready.val();
                self.xgmii_txd.next = self.xtx.xgmii_txd.val();
                self.xgmii_txc.next = self.xtx.xgmii_txc.val();
                // Receive: the XGMII decoder's frames, code errors flagged in tuser.
                self.xrx.xgmii_rxd.next = self.xgmii_rxd.val();
                self.xrx.xgmii_rxc.next = self.xgmii_rxc.val();
                self.$inner.$rd.next = self.xrx.m_axis_tdata.val();
                self.$inner.$rk.next = self.xrx.m_axis_tkeep.val();
                self.$inner.$rl.next = self.xrx.m_axis_tlast.val();
                self.$inner.$rv.next = self.xrx.m_axis_tvalid.val();
                self.$inner.$ru.next = self.xrx.m_axis_tuser.val();
                self.xgmii_tx_frames.next = self.xtx.frames.val();
                self.xgmii_tx_underrun.next = self.xtx.underrun.val();
                self.xgmii_rx_frames.next = self.xrx.frames.val();
                self.xgmii_rx_code_err.next = self.xrx.code_err.val();
            }
        }
    };
}

pub(crate) use xgmii_face;
