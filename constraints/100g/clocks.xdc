# ferroce 100g: the core clock for vendor flows (Vivado, UltraScale+). UNTESTED HERE: no
# Vivado run has read this file; it is the constraint the 100g designs are designed against.
#
# `clk` is the 250 MHz user clock of the hard 100G MAC's AXI-stream face (CMAC or an
# equivalent), 512 bits per cycle. If your MAC's clock comes from its transceiver, constrain it
# where it is created and drop this create_clock.
create_clock -period 4.000 -name clk [get_ports clk]
# `rst` is synchronous to `clk` (active high); drive it from a register on `clk`.
