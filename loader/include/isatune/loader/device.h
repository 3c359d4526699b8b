#pragma once
// The Device interface: what the tuner, the loader and the CLI need of a GPU, or of something that stands in
// for one (the CDNA emulator, a replay of recorded measurements). Backends: hip, cuda (dlopen), emu.
// Standard library only: applications link this without LLVM.
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "isatune/code_object.h"
#include "isatune/tensor_map_args.h"

namespace isatune::loader {

struct DeviceProperties {
  std::string backend;          // "hip", "cuda", "emu"
  int index = 0;                // device ordinal within the backend
  std::string name;             // "AMD Instinct MI300X", "NVIDIA H200", "CDNA emulator (gfx942)"
  Vendor vendor = Vendor::amd;
  std::string isa;              // gfx942, sm_90a
  std::string target_id;        // full AMD target id, or the sm name
  uint32_t compute_units = 0;   // CUs or SMs
  uint64_t memory_bytes = 0;
  uint32_t shared_bytes_per_workgroup = 0; // LDS / shared memory a workgroup may use
  uint32_t wave_size = 64;
  uint32_t max_workgroup_size = 1024;
  std::string driver_version;   // runtime/driver version, or the emulator's version
  bool emulated = false;        // timings are estimates, never mixed with real measurements
  // Read from the driver where the backend can (0: not known). The clocks, bus width and L2 size are part of
  // the database's device key: the same name with other clocks (a power-limited variant, as H200 NVL is of
  // H200 SXM) is another device. The driver reports the rated clocks, not the current ones.
  uint32_t clock_khz = 0;                  // SM (shader) clock
  uint32_t memory_clock_khz = 0;           // peak memory clock
  uint32_t memory_bus_bits = 0;            // global memory bus width
  uint64_t l2_bytes = 0;                   // last-level (L2) cache
  uint32_t default_shared_bytes_per_workgroup = 0; // what a launch may use without opting in (NVIDIA: 48 KiB)
  uint32_t shared_bytes_per_cu = 0;        // per CU / SM, all resident workgroups together
  uint32_t registers_per_cu = 0;           // 32-bit registers per CU / SM
  // The physical GPU (empty: not known), recorded in every run row so a heterogeneous cluster's results can be
  // told apart: the driver's UUID ("GPU-..." on NVIDIA) and PCI bus id ("0000:41:00.0"). Emulators give a
  // stable synthetic identity ("emu-<target>-<index>").
  std::string uuid;
  std::string pci_bus_id;
};

// A device address.
using DevicePtr = uint64_t;

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
};

struct LaunchConfig {
  Dim3 grid;                    // in workgroups (blocks)
  Dim3 block;                   // threads per workgroup
  uint32_t dynamic_shared_bytes = 0;
  Dim3 cluster = {1, 1, 1};     // CTAs per cluster (NVIDIA sm_90+); 1,1,1: no clusters
};

// A kernel inside a loaded module.
class Function {
public:
  virtual ~Function() = default;
  virtual const KernelInfo& info() const = 0;
};

// A code object loaded onto a device.
class Module {
public:
  virtual ~Module() = default;
  // Throws InputError naming the kernels the module has when `name` is not one of them.
  virtual std::shared_ptr<Function> function(const std::string& name) = 0;
};

// A point in a device's stream of work; two of them give an elapsed time.
class Event {
public:
  virtual ~Event() = default;
};

class Device {
public:
  virtual ~Device() = default;
  virtual const DeviceProperties& properties() const = 0;

  virtual DevicePtr alloc(size_t bytes) = 0;
  virtual void free(DevicePtr ptr) = 0;
  virtual void copy_to_device(DevicePtr dst, const void* src, size_t bytes) = 0;
  virtual void copy_to_host(void* dst, DevicePtr src, size_t bytes) = 0;
  virtual void fill(DevicePtr dst, uint8_t value, size_t bytes) = 0;

  // Rejects (InputError) a code object whose target or shared memory does not fit this device.
  virtual std::shared_ptr<Module> load(const CodeObject& code) = 0;
  // kernargs: the packed argument buffer, laid out as the kernel's KernelInfo says.
  virtual void launch(Function& function, const LaunchConfig& config, std::span<const uint8_t> kernargs) = 0;

  virtual std::unique_ptr<Event> create_event() = 0;
  virtual void record(Event& event) = 0;
  // Milliseconds between two recorded events (after synchronize()).
  virtual double elapsed_ms(const Event& start, const Event& end) = 0;
  virtual void synchronize() = 0;

  // A TMA tensor map for a kernel parameter (`.param .align 64 .b8 map[128]`), from the arguments of
  // cuTensorMapEncodeTiled with the global address a device address of this device: the CUDA driver encodes
  // it on a GPU, the PTX emulator in its own encoding. Throws InputError naming the argument that is wrong;
  // devices without tensor maps (AMD, the CDNA emulator) throw InputError saying so.
  virtual TensorMap encode_tensor_map(const TensorMapTiledArgs& args);

  // What the device's own checks found in the launches since the last call, one line each, and forgets them:
  // the emulator's wait-count, hazard and bounds reports. Real GPUs check nothing and return none.
  virtual std::vector<std::string> take_diagnostics() { return {}; }
};

} // namespace isatune::loader
